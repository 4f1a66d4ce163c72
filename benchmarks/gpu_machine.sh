#!/usr/bin/env bash
# On a GPU machine whose python3 has torch with CUDA (and numpy, pandas, scipy, scikit-learn,
# numba, h5py): install the few packages it lacks from wheels in .device/wheels (cp312, fetched
# beforehand: `pip download --no-deps --only-binary=:all: --python-version 3.12
# --platform manylinux_2_28_x86_64 -d .device/wheels pyyaml tqdm pytest pluggy iniconfig
# pygments psutil packaging torchvision==<the one built for that torch>`), then run the GPU
# tests and benchmarks/gpu.py, with MNIST's four files in .device/mnist. Results go to $OUT.
#
#   [GPU_TESTS=0] bash benchmarks/gpu_machine.sh [arguments of benchmarks/gpu.py but --mnist, --out]
set -uo pipefail
OUT=${OUT:-/tmp/gpu-out}
SITE=build/device-site
mkdir -p "$OUT" "$SITE"
export PYTHONPATH="src:$SITE" PYTHONUNBUFFERED=1
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
    timeout 200 python3 -m pytest tests/test_gpu.py -p no:cacheprovider -q -rA 2>&1 |
        tail -25 | tee "$OUT/test_gpu.txt"
fi
[ "$#" -gt 0 ] || set -- --parts table2_rounds table2_full embed
python3 benchmarks/gpu.py --mnist .device/mnist --out "$OUT/results" "$@" 2>&1 |
    grep -v "round/s\|s/round\|it/s" | tee -a "$OUT/gpu_bench.log"
