//===- CpuFeatures.cpp - Instruction-set extensions a library needs -------===//

#include "dpc/Runtime/CpuFeatures.h"

namespace {

/// An extension: its predefined macro and its __builtin_cpu_supports name.
struct Feature {
  const char *macro;
  const char *name;
};

// The x86 extensions a compiler's -march can turn on (GCC 12 and Clang
// both define these macros and know these names).
constexpr Feature kFeatures[] = {
    {"__SSE3__", "sse3"},
    {"__SSSE3__", "ssse3"},
    {"__SSE4_1__", "sse4.1"},
    {"__SSE4_2__", "sse4.2"},
    {"__SSE4A__", "sse4a"},
    {"__POPCNT__", "popcnt"},
    {"__AVX__", "avx"},
    {"__AVX2__", "avx2"},
    {"__FMA__", "fma"},
    {"__F16C__", "f16c"},
    {"__BMI__", "bmi"},
    {"__BMI2__", "bmi2"},
    {"__LZCNT__", "lzcnt"},
    {"__MOVBE__", "movbe"},
    {"__ADX__", "adx"},
    {"__AES__", "aes"},
    {"__PCLMUL__", "pclmul"},
    {"__SHA__", "sha"},
    {"__GFNI__", "gfni"},
    {"__VAES__", "vaes"},
    {"__VPCLMULQDQ__", "vpclmulqdq"},
    {"__AVXVNNI__", "avxvnni"},
    {"__AVX512F__", "avx512f"},
    {"__AVX512CD__", "avx512cd"},
    {"__AVX512BW__", "avx512bw"},
    {"__AVX512DQ__", "avx512dq"},
    {"__AVX512VL__", "avx512vl"},
    {"__AVX512IFMA__", "avx512ifma"},
    {"__AVX512VBMI__", "avx512vbmi"},
    {"__AVX512VBMI2__", "avx512vbmi2"},
    {"__AVX512VNNI__", "avx512vnni"},
    {"__AVX512BITALG__", "avx512bitalg"},
    {"__AVX512VPOPCNTDQ__", "avx512vpopcntdq"},
    {"__AVX512BF16__", "avx512bf16"},
    {"__AVX512FP16__", "avx512fp16"},
    {"__AVX512VP2INTERSECT__", "avx512vp2intersect"},
};

/// Whether `macros` defines `macro` (a line "#define MACRO ...").
bool defines(std::string_view macros, std::string_view macro) {
  std::string line = "#define " + std::string(macro);
  for (size_t at = macros.find(line); at != std::string_view::npos;
       at = macros.find(line, at + 1)) {
    size_t end = at + line.size();
    if ((at == 0 || macros[at - 1] == '\n') &&
        (end == macros.size() || macros[end] == ' ' || macros[end] == '\n'))
      return true;
  }
  return false;
}

} // namespace

std::vector<std::string>
dpc::getCpuFeaturesFromMacros(std::string_view macros) {
  std::vector<std::string> features;
  for (const Feature &feature : kFeatures)
    if (defines(macros, feature.macro))
      features.push_back(feature.name);
  return features;
}

std::optional<bool> dpc::hasCpuFeature(std::string_view name) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // __builtin_cpu_supports takes string literals only.
#define DPC_CHECK(literal)                                                     \
  if (name == literal)                                                         \
    return __builtin_cpu_supports(literal) != 0;
  DPC_CHECK("sse3")
  DPC_CHECK("ssse3")
  DPC_CHECK("sse4.1")
  DPC_CHECK("sse4.2")
  DPC_CHECK("sse4a")
  DPC_CHECK("popcnt")
  DPC_CHECK("avx")
  DPC_CHECK("avx2")
  DPC_CHECK("fma")
  DPC_CHECK("f16c")
  DPC_CHECK("bmi")
  DPC_CHECK("bmi2")
  DPC_CHECK("lzcnt")
  DPC_CHECK("movbe")
  DPC_CHECK("adx")
  DPC_CHECK("aes")
  DPC_CHECK("pclmul")
  DPC_CHECK("sha")
  DPC_CHECK("gfni")
  DPC_CHECK("vaes")
  DPC_CHECK("vpclmulqdq")
  DPC_CHECK("avxvnni")
  DPC_CHECK("avx512f")
  DPC_CHECK("avx512cd")
  DPC_CHECK("avx512bw")
  DPC_CHECK("avx512dq")
  DPC_CHECK("avx512vl")
  DPC_CHECK("avx512ifma")
  DPC_CHECK("avx512vbmi")
  DPC_CHECK("avx512vbmi2")
  DPC_CHECK("avx512vnni")
  DPC_CHECK("avx512bitalg")
  DPC_CHECK("avx512vpopcntdq")
  DPC_CHECK("avx512bf16")
  DPC_CHECK("avx512fp16")
  DPC_CHECK("avx512vp2intersect")
#undef DPC_CHECK
#endif
  return std::nullopt;
}
