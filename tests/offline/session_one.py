#!/usr/bin/env python3
"""Session one (notebooks 00-04) in the real gonb kernel, with the network cut.

Run by tests/offline/run.sh inside a network namespace with only loopback, under
`queuekit servers with` (AWS_ENDPOINT_URL_DYNAMODB and _SQS set). Takes the
environment JupyterLab gets from scripts/env.sh, GOPROXY included (the module
cache first, then the proxy: not GOPROXY=off, since the point is that the real
configuration works offline). Seeds the sample nights, then for each notebook
starts a kernel in a folder outside the repository and runs its first code cell
and the middle cell restart_cells.MIDDLE names: each must succeed and print no
module, proxy, checksum-database or name-lookup failure. Prints ok/FAIL lines
with each cell's time and exits 1 when any failed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "notebooks"))
from restart_cells import MIDDLE, NETWORK_FAILURE, Kernel, code_cells  # noqa: E402
from run_notebooks import jupyter_env  # noqa: E402

SESSION_ONE = ["00", "01", "02", "03", "04"]
# Besides restart_cells' NETWORK_FAILURE: what the go command prints when it
# reaches for the network and finds none.
OFFLINE_FAILURE = re.compile(r"dial tcp|no such host|network is unreachable|sum\.golang\.org|verifying .*: |"
                             r"reading https?://|Get \"https?://|i/o timeout")


def main() -> int:
    jupyter_env()
    failed = 0
    seed = subprocess.run(["go", "run", "./queuekit/cmd/queuekit", "seed", "--sample"], cwd=ROOT,
                          capture_output=True, text=True)
    if seed.returncode != 0:
        print(f"FAIL  queuekit seed --sample, offline:\n{seed.stderr[-800:]}", flush=True)
        return 1
    print(f"ok    servers answer and the sample nights are seeded (go run ./queuekit/cmd/queuekit seed --sample)", flush=True)
    with tempfile.TemporaryDirectory(prefix="offline-") as workdir:
        for prefix in SESSION_ONE:
            path = next((ROOT / "notebooks").glob(f"{prefix}-*.ipynb"))
            cells = code_cells(path)
            ids = [cells[0]["id"], MIDDLE[prefix]]
            kernel = Kernel(workdir)
            try:
                for cid in ids:
                    cell = next(c for c in cells if c["id"] == cid)
                    t0 = time.monotonic()
                    status, texts, errors = kernel.run("".join(cell["source"]), 600)
                    took = time.monotonic() - t0
                    out = "\n".join(texts + errors)
                    bad = NETWORK_FAILURE.search(out) or OFFLINE_FAILURE.search(out)
                    what = f"{path.name} cell {cid} ({'first' if cid == ids[0] else 'middle'}) in {took:.1f} s"
                    if status == "ok" and not errors and not bad:
                        print(f"ok    {what}", flush=True)
                    else:
                        failed += 1
                        why = f"network failure {bad.group(0)!r}" if bad else f"status {status}"
                        print(f"FAIL  {what}: {why}\n      {out.strip()[-800:]}", flush=True)
            finally:
                kernel.close()
        log = Path(workdir) / "kernel.log"
        if log.exists():
            text = log.read_text(errors="replace")
            m = NETWORK_FAILURE.search(text) or OFFLINE_FAILURE.search(text)
            if m:
                failed += 1
                i = m.start()
                print(f"FAIL  the kernels' log names a network failure: {text[max(0, i - 300):i + 300]!r}", flush=True)
            else:
                print("ok    the kernels' log names no module, proxy or network failure", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
