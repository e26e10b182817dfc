#include <iostream>

int main() {
  std::cerr << "zpolicy: the command line is being built (issue #2)\n";
  return 2;
}
