"""Run a peer driver of ../shared/bench at 10^7 references, which the drivers refuse.

The drivers (`peer_bench.py` for fsspec, `peers/gdal_peer.py` for GDAL) accept N = 1e4, 1e5
or 1e6 only, although the corpus (`make_synthetic.py --sizes 4,5,6,7`) holds 10^7 sets. This
imports the driver unchanged, lets its N check accept 1e7 too, and runs its main with the
arguments given, so the workload, the check of the bytes read and the record printed are the
driver's own:

    python benches/tools/at_1e7.py ../shared/bench/peers/gdal_peer.py --root /tmp/refbench load-json 1e7
"""

import importlib.util
import os
import sys


def main():
    driver = os.path.abspath(sys.argv[1])
    sys.path.insert(0, os.path.dirname(driver))
    spec = importlib.util.spec_from_file_location("driver", driver)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    check = module.parse_n

    def parse_n(text):
        if text.rstrip("z") == "1e7":
            n, z = check(text.replace("1e7", "1e6"))
            return n * 10, z
        return check(text)

    module.parse_n = parse_n
    sys.argv = [driver, *sys.argv[2:]]
    module.main()


if __name__ == "__main__":
    main()
