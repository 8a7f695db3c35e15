#!/bin/bash
# Make .dev/ for benchmarks/gpu/device_run.sh on a GPU machine (Python 3.12, torch,
# cupy and numpy there; no registry; 64 MiB of files per call): cp312 wheels of spaCy's
# stack and of transformers 4.53.2, with the debug symbols of their compiled modules
# stripped; this package as a wheel; the encoder file packed for the carried corpora.
# Run here, in the checkout, with the project's venv active and corpus/asp, corpus/pse
# converted. Prints the size of what will travel; keep models/*.whl from travelling
# (git rm --cached models/*.whl and /models/*.whl in .git/info/exclude, undone after).
set -euo pipefail
grep -qx "/.dev/" .git/info/exclude 2>/dev/null || echo "/.dev/" >> .git/info/exclude
RAW=${RAW:-/tmp/gpu-wheels-raw}
mkdir -p "$RAW" .dev/whl .dev/texts
rm -f .dev/whl/*.whl
PINS="spacy==3.8.18 thinc==8.3.14 blis==1.3.4 cymem==2.0.16 preshed==3.0.15 murmurhash==1.0.16
srsly==2.5.6 wasabi==1.1.3 catalogue==2.0.10 confection==1.3.4 weasel==1.0.1 spacy-legacy==3.0.12
spacy-loggers==1.0.5 pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0
typing-inspection==0.4.5 typing-extensions==4.16.0 cloudpathlib==0.26.0 smart-open==9.0.2
transformers==4.53.2 tokenizers==0.21.4 huggingface-hub==0.36.2 latincy-preprocess==0.5.1"
python -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  -d "$RAW" $PINS
for wheel in "$RAW"/*.whl; do
  name=$(basename "$wheel")
  compiled=$(unzip -Z1 "$wheel" | grep -c '\.so$' || true)  # (grep -q would cut unzip's pipe)
  if [ "$compiled" = 0 ]; then cp "$wheel" .dev/whl/; continue; fi
  work=$(mktemp -d)
  python -m zipfile -e "$wheel" "$work"
  find "$work" -name "*.so" -exec strip --strip-unneeded {} \;
  (cd "$work" && python -c "
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    for root, _, files in os.walk('.'):
        for f in files:
            z.write(os.path.join(root, f))
" "$OLDPWD/.dev/whl/$name")
  rm -rf "$work"
done
python -m pip wheel -q --no-deps --no-build-isolation -w .dev/whl . 2>/dev/null
python - <<'PY' > .dev/texts/tests.txt
import sys
sys.path.insert(0, "tests")
from test_parallelism_component import TEXTS
print("\n".join(TEXTS))
PY
HF_HUB_OFFLINE=1 python benchmarks/gpu/pack_encoder.py corpus/asp corpus/pse .dev/texts --out .dev/e5-small-q4.bin.gz
CARRY=".dev corpus/asp/train.spacy corpus/asp/dev.spacy corpus/asp/test.spacy corpus/pse/train.spacy corpus/pse/dev.spacy"
tree=$(git ls-files -z --cached --others --exclude-standard | grep -zv '^models/.*\.whl$' | xargs -0 du -cb | tail -1 | cut -f1)
carried=$(du -scb $CARRY | tail -1 | cut -f1)
echo "travels: $(( (tree + carried) / 1048576 )) MiB of 64 (tree without models/*.whl $((tree / 1048576)), carried $((carried / 1048576)))"
echo "carry: $CARRY"
