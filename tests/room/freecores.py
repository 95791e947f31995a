"""The cores the host's other work left free while a cell ran, for
tests/room/capacity.py: no Docker and nothing done on import, so
tests/room/test_freecores.py checks it anywhere."""

import math

# A cell that ran had some core: never less than this (queuekit/cmd/roomcap
# floors a step's free cores at the same value).
FLOOR = 0.05


def busy_jiffies(stat_line):
    """(busy, total) jiffies from /proc/stat's first line ("cpu  user nice system idle iowait irq softirq steal ...")."""
    v = [int(x) for x in stat_line.split()[1:9]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def free_cores(ncpu, wall, host_busy, room_cpu, floor=FLOOR):
    """ncpu − the cores the host used for anything but the participants'
    containers over WALL seconds: HOST_BUSY CPU seconds of the whole host
    (/proc/stat) minus ROOM_CPU, the participants' containers' CPU seconds
    (their cgroups), over the same time. Within [floor, ncpu]; None when it
    cannot be told (no wall time, or a reading that is not a number)."""
    vals = (ncpu, wall, host_busy, room_cpu)
    if any(not isinstance(x, (int, float)) or math.isnan(x) or math.isinf(x) for x in vals) or wall <= 0 or ncpu <= 0:
        return None
    background = max(0.0, host_busy - room_cpu) / wall
    return min(float(ncpu), max(floor, ncpu - background))
