# -*- Python -*-
# lit configuration of dpc's IR-level tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "DPC"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dpc_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "lib"]

config.environment["FILECHECK_OPTS"] = "-enable-var-scope"
config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%dpc_src_root", config.dpc_src_root))
config.substitutions.append(("%dpc_obj_root", config.dpc_obj_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = [ToolSubst("dpc-opt", unresolved="fatal"),
         ToolSubst("dpc-run", unresolved="fatal")]
# The fuzz targets replay the regression corpus (test/Fuzz).
tools += [ToolSubst(name, unresolved="fatal") for name in (
    "dpc-fuzz-onnx-import", "dpc-fuzz-ir-train", "dpc-fuzz-cluster-file",
    "dpc-fuzz-npy-files")]
llvm_config.add_tool_substitutions(tools, [config.dpc_tools_dir])
# Upstream's mlir-opt reads what -dpc-export-shard writes.
llvm_config.add_tool_substitutions([ToolSubst("mlir-opt", unresolved="fatal")],
                                   [config.llvm_tools_dir])
