# -*- Python -*-
# lit configuration that runs dpc's GoogleTest binaries.

import lit.formats

config.name = "DPC-Unit"
config.suffixes = []
config.test_source_root = config.dpc_obj_root + "/unittests"
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
