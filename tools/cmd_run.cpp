// `qmatmul run MODEL.onnx [-i INPUT.pb]... -o OUTDIR [--threads N] [--ort-compat]`:
// loads an ONNX model of MatMulInteger / QLinearMatMul nodes, binds the -i
// tensor files in order to the graph inputs that are not initializers, runs
// it and writes OUTDIR/output_<i>.pb (a TensorProto named after the graph
// output) for each graph output in order, creating OUTDIR when missing.
// Errors are thrown; main.cpp prints them as one stderr line and exits 1.
// Outputs are written only after the whole model has run successfully.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "qmatmul/onnx.h"

namespace qmatmul::cli {
namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::string outdir;
  ThreadArgs thread_args;
  bool ort_compat = false;
};

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text.empty() ? "none" : text;
}

void run(const RunArgs& args) {
  Options options;
  args.thread_args.apply(options);
  if (args.ort_compat) options.requantization = Requantization::OnnxRuntimeCompat;
  const Model model = Model::load(args.model, options);

  const auto& names = model.input_names();
  if (args.inputs.size() != names.size()) {
    throw Error(args.model + ": the model has " + std::to_string(names.size()) + " inputs (" +
                join(names) + ") but " + std::to_string(args.inputs.size()) +
                " -i files were given");
  }
  std::vector<Tensor> inputs;
  inputs.reserve(args.inputs.size());
  for (const std::string& path : args.inputs) inputs.push_back(read_tensor_pb(path));

  const std::vector<Tensor> outputs = model.run(inputs);

  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(args.outdir, ec);
  if (ec || !fs::is_directory(args.outdir)) {
    throw Error("cannot create output directory '" + args.outdir + "'" +
                (ec ? ": " + ec.message() : std::string(": a file of that name exists")));
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const fs::path file = fs::path(args.outdir) / ("output_" + std::to_string(i) + ".pb");
    write_tensor_pb(file.string(), outputs[i], model.output_names()[i]);
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run an ONNX model made of MatMulInteger / QLinearMatMul nodes on TensorProto (.pb) "
      "inputs and write its outputs as OUTDIR/output_<i>.pb");
  cmd->add_option("model", args->model, "The ONNX model (.onnx)")->required();
  cmd->add_option("-i,--input", args->inputs,
                  "An input tensor (.pb TensorProto); repeat once per graph input that is "
                  "not an initializer, in graph order")
      ->allow_extra_args(false);  // one file per -i, so `-i a.pb MODEL` cannot swallow MODEL
  cmd->add_option("-o,--outdir", args->outdir,
                  "Directory for output_<i>.pb, one per graph output (created if missing)")
      ->required();
  add_thread_options(cmd, args->thread_args);
  cmd->add_flag("--ort-compat", args->ort_compat,
                "Requantize QLinearMatMul with ONNX Runtime's float32 arithmetic instead of "
                "the ONNX reference's float64");
  cmd->callback([args] { run(*args); });
}

}  // namespace qmatmul::cli
