"""`python -m dptool.cli`, as the `dptool` console script."""

from dptool.cli.main import main

main()
