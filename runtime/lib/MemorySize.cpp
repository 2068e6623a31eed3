//===- MemorySize.cpp - Sizes of memory as users write them ---------------===//

#include "dpc/Runtime/MemorySize.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <utility>

using namespace dpc;

Status dpc::parseMemorySize(const std::string &text, double defaultUnitBytes,
                            double &bytes) {
  size_t begin = text.find_first_not_of(' ');
  size_t end = begin == std::string::npos
                   ? begin
                   : text.find_first_not_of("0123456789.e", begin);
  std::string number =
      begin == std::string::npos
          ? ""
          : text.substr(begin, end == std::string::npos ? std::string::npos
                                                        : end - begin);
  std::string unit = end == std::string::npos ? "" : text.substr(end);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back())))
    unit.pop_back();
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit[0])))
    unit.erase(0, 1);
  char *parsedEnd = nullptr;
  double value = number.empty() ? 0 : std::strtod(number.c_str(), &parsedEnd);
  if (number.empty() || *parsedEnd || !(value > 0) || std::isinf(value))
    return Status::error("'" + text + "' is not a positive size");
  static const std::pair<const char *, double> units[] = {
      {"B", 1.0},         {"KB", 1e3},           {"MB", 1e6},
      {"GB", 1e9},        {"TB", 1e12},          {"KiB", 1024.0},
      {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  if (unit.empty()) {
    bytes = value * defaultUnitBytes;
    return Status::success();
  }
  for (auto [name, size] : units)
    if (unit == name) {
      bytes = value * size;
      return Status::success();
    }
  return Status::error("'" + text + "' has an unknown unit '" + unit +
                       "' (expected B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)");
}
