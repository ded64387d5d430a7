#include "commands.h"

int main(int argc, char** argv) { return stoker::cli::run_main(argc, argv); }
