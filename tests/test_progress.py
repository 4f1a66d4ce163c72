import logging

from fedclust.progress import Progress, progress


def test_plain_lines_at_most_every_interval_and_at_the_end(caplog):
    caplog.set_level(logging.INFO, logger="fedclust.progress")
    assert list(progress(range(4), desc="work", interval=3600.0)) == [0, 1, 2, 3]
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [lines[0]] and lines[0].startswith("work: done 4/4 it (100%)")
    caplog.clear()
    bar = Progress(10, "manual", interval=0.0)
    bar.update(5)
    bar.set_postfix(loss="0.5")
    bar.close()
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("manual: progress 5/10 it (50%)")
    assert lines[-1].startswith("manual: done 5/10") and lines[-1].endswith("loss=0.5")


def test_disabled_progress_is_silent(caplog):
    caplog.set_level(logging.INFO)
    assert sum(progress(range(3), desc="quiet", disable=True)) == 3
    assert caplog.records == []


def test_a_progress_line_estimates_the_time_left_at_the_rate_so_far(caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger="fedclust.progress")
    clock = iter([0.0, 120.0, 240.0])
    monkeypatch.setattr("fedclust.progress.time.monotonic", lambda: next(clock))
    bar = Progress(8, "grid", interval=60.0, heartbeat=None)
    bar.update(2)           # 2 of 8 steps in 120 s: 6 more at 60 s each
    bar.update(2)           # 4 of 8 in 240 s: 4 more at 60 s each
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["grid: progress 2/8 it (25%) in 120 s, about 6.0 min left",
                     "grid: progress 4/8 it (50%) in 240 s, about 4.0 min left"]


def test_a_long_step_gets_a_heartbeat_line_saying_which_step_runs(caplog):
    import time

    caplog.set_level(logging.INFO, logger="fedclust.progress")
    bar = Progress(3, "baseline", interval=3600.0, heartbeat=0.05)
    bar.update()
    time.sleep(0.3)                  # step 2 runs long: heartbeat lines, none from update()
    bar.close()
    lines = [r.getMessage() for r in caplog.records]
    beats = [line for line in lines if "step 2 running for" in line]
    assert beats and all(line.startswith("baseline: progress 1/3 it (33%)") for line in beats)
    assert lines[-1].startswith("baseline: done 1/3")
    count = len(caplog.records)
    time.sleep(0.2)                  # closed: the heartbeat stopped
    assert len(caplog.records) == count


def test_the_heartbeat_is_due_a_heartbeat_after_the_last_line_whatever_wrote_it(monkeypatch):
    now = [0.0]
    monkeypatch.setattr("fedclust.progress.time.monotonic", lambda: now[0])
    bar = Progress(4, "grid", interval=30.0, heartbeat=None)  # no thread: the clock is ours
    bar.heartbeat = 50.0
    assert bar._until_due() == 50.0
    now[0] = 35.0
    bar.update()                     # a line at 35 s (interval 30 s passed)
    now[0] = 50.0                    # the heartbeat would have woken here: due 35 s later
    assert bar._until_due() == 35.0  # silence at most 50 s, not 50 + 35
    now[0] = 90.0
    assert bar._until_due() == 0.0
