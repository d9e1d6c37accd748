"""The `dptool` command line: one click group, one error handler, shared options; a module per command group.

main (the group, its error handler, generate · init · rule · demo-data · graph · ablate), evaluate (score ·
answer · eval), llm (link · judge-agreement, the --llm options), dp (the `dptool dp` group), options (shared
option decorators). The top of the import order: it may import every other package of dptool; none imports it.
"""

from dptool.cli.main import main

__all__ = ["main"]
