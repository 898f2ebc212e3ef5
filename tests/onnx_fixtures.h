// Model and file fixtures shared by the ONNX I/O, CLI and float8 ONNX test
// files (one test executable): temporary directories, .pb files, tensors
// and small models built with the ONNX protobuf classes. Defined in
// test_onnx_io.cpp, except qlinear_scale_model (test_cli.cpp).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace onnx_fixtures {

namespace fs = std::filesystem;

// A fresh, empty directory under the system temp dir.
fs::path temp_dir(const std::string& tag);
void save_bytes(const fs::path& path, const std::string& bytes);
std::string load_bytes(const fs::path& path);
void save_proto(const fs::path& path, const google::protobuf::MessageLite& message);
void add_value_info(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                    const std::string& name, int32_t type, const std::vector<int64_t>& dims);
onnx::TensorProto raw_tensor(const std::string& name, int32_t type,
                             const std::vector<int64_t>& dims, const std::string& raw);
// A MatMulInteger model (opset `opset`) of 2x3 uint8 a and 3x2 int8 b.
onnx::ModelProto matmul_integer_model(int64_t opset);
// ../shared/onnx-node-tests beside the repository.
std::string node_tests_dir();
// One QLinearMatMul on 1x1 tensors whose exact result and ONNX Runtime's differ.
onnx::ModelProto qlinear_scale_model(int64_t opset, int32_t scale_type);

}  // namespace onnx_fixtures
