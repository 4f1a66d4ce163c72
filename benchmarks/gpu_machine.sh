#!/usr/bin/env bash
# On a GPU machine whose python3 has torch with CUDA (and numpy, pandas, scipy, scikit-learn,
# numba, h5py): install the few packages it lacks from wheels in .device/wheels (cp312, fetched
# beforehand: `pip download --no-deps --only-binary=:all: --python-version 3.12
# --platform manylinux_2_28_x86_64 -d .device/wheels pyyaml tqdm pytest pluggy iniconfig
# pygments psutil packaging torchvision==<the one built for that torch>`), then run the GPU
# tests and benchmarks/gpu.py, with MNIST's four files in .device/mnist. Results go to $OUT.
#
# Everything ends within SECONDS_LEFT seconds (default 560: a command of the device tool may
# run 600), the tests first, then the benchmark's parts in the order given, each written to
# $OUT when it ends, so that a run cut short still returns what it measured.
#
#   [GPU_TESTS=0] [SECONDS_LEFT=560] bash benchmarks/gpu_machine.sh \
#       [arguments of benchmarks/gpu.py but --mnist, --out]
set -uo pipefail
OUT=${OUT:-/tmp/gpu-out}
SITE=build/device-site
END=$((SECONDS + ${SECONDS_LEFT:-560}))
mkdir -p "$OUT" "$SITE" build/numba-cache
# one kernel cache for the tests and every process of the benchmark: compiled once
export PYTHONPATH="src:$SITE" PYTHONUNBUFFERED=1 NUMBA_CACHE_DIR=$PWD/build/numba-cache
declare -A WHEEL=([yaml]=pyyaml [tqdm]=tqdm [pytest]=pytest [pluggy]=pluggy
                  [iniconfig]=iniconfig [pygments]=pygments [psutil]=psutil
                  [packaging]=packaging)
for module in "${!WHEEL[@]}"; do
    python3 -c "import $module" 2>/dev/null ||
        python3 -m pip install -q --no-deps --no-index --target "$SITE" \
            .device/wheels/"${WHEEL[$module]}"-*.whl
done
vision=$(python3 -c "import torch; v = torch.__version__.split('+')[0].split('.'); \
print('0.%d.0' % (int(v[1]) + 15) if v[0] == '2' else '')")
python3 -c "import torchvision" 2>/dev/null || python3 -m pip install -q --no-deps --no-index \
    --target "$SITE" ".device/wheels/torchvision-$vision-cp312-cp312-manylinux_2_28_x86_64.whl"
{ nvidia-smi; python3 -c "import torch, torchvision; print(torch.__version__, \
torchvision.__version__, torch.version.cuda, torch.cuda.get_device_name(0))"; } \
    > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt" | tail -2
if [ "${GPU_TESTS:-1}" != 0 ]; then      # GPU_TESTS=0: the benchmark alone
    timeout $(((END - SECONDS) / 3)) python3 -m pytest tests/test_gpu.py -p no:cacheprovider \
        -q -rA --durations=0 2>&1 |
        tail -40 | tee "$OUT/test_gpu.txt"
fi
[ "$#" -gt 0 ] || set -- --parts table2_full embed table2_rounds
timeout $((END - SECONDS)) python3 benchmarks/gpu.py --mnist .device/mnist \
    --out "$OUT/results" "$@" 2>&1 | tee "$OUT/gpu_bench_raw.log" |
    grep --line-buffered -v "round/s\|s/round\|it/s" | tee -a "$OUT/gpu_bench.log"
