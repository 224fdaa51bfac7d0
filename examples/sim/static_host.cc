// examples/sim/static_host.cc - a C++ host built the way many game engines
// build, with -fno-exceptions -fno-rtti, linking ag statically and running
// one example (bouncing_ball.c, its main renamed example_main). ag's own
// objects keep their exceptions and RTTI inside; no exception crosses the C
// ABI, so the host needs neither.
#include <ag/ag.h>

#include <cstdio>

extern "C" int example_main(int argc, char** argv);

int main(int argc, char** argv) {
  std::printf("static ag %s in a -fno-exceptions -fno-rtti host\n", ag_version_string());
  return example_main(argc, argv);
}
