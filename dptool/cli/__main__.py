"""`python -m dptool.cli`, as the `dptool` console script."""

from dptool.cli.main import main

main(prog_name="dptool")  # its usage lines and errors name the command as the console script does
