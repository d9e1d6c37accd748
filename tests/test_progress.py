"""Progress in a log (no TTY): a line at least every interval while a stage runs, and one when it ends."""

from __future__ import annotations

import io
import time

from dptool.progress import EVERY, progressbar


def test_a_log_gets_a_line_every_interval_and_one_at_the_end():
    log = io.StringIO()  # no terminal: click alone would write the label once and nothing more
    with progressbar(length=4, label="  answer", file=log, every=0.05) as bar:
        for _ in range(4):
            bar.update(1)
            time.sleep(0.12)
    lines = log.getvalue().splitlines()
    assert len(lines) >= 5, lines  # at least one per 0.05 s over ~0.5 s, and the last
    assert all(line.startswith("  answer: ") for line in lines)
    assert lines[-1].startswith("  answer: 4/4 (100%), ")
    assert EVERY <= 10


def test_an_iterable_counts_itself():
    log = io.StringIO()
    with progressbar(["a", "b", "c"], label="judging", file=log, every=60) as bar:
        seen = list(bar)
    assert seen == ["a", "b", "c"]
    assert log.getvalue().splitlines() == [log.getvalue().splitlines()[-1]]
    assert log.getvalue().startswith("  judging: 3/3 (100%), ")


def test_a_silenced_stage_writes_nothing_anywhere(capsys):
    class Null:
        def write(self, _):
            pass

        def flush(self):
            pass

    with progressbar(length=2, label="gold", file=Null(), every=0.01) as bar:
        bar.update(2)
        time.sleep(0.05)
    assert capsys.readouterr() == ("", "")


def test_an_interrupted_stage_leaves_the_error_the_last_line():
    log = io.StringIO()
    try:
        with progressbar(length=3, label="answer", file=log, every=60):
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert log.getvalue() == ""


def test_a_dbt_command_in_a_log_says_it_is_running():
    from dptool.progress import heartbeat

    log = io.StringIO()  # `dbt docs generate` through dbt's runner prints nothing for minutes in a log
    with heartbeat("dbt docs generate", file=log, every=0.05):
        time.sleep(0.3)
    lines = log.getvalue().splitlines()
    assert len(lines) >= 4 and all(line.startswith("  dbt docs generate: running, ") for line in lines), lines
