#include "core/error.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ag::detail {

void append(std::string& s, double v) {
  char buf[32];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::isnan(v) || std::strtod(buf, nullptr) == v) break;
  }
  s += buf;
}

}  // namespace ag::detail
