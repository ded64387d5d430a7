#!/usr/bin/env bash
# Writes an image folder (root/<class>/<image>.jpg|png) as WebDataset shards: uncompressed tar
# files of <key>.jpg + <key>.cls (the class id, classes numbered in name order as an image
# folder numbers them), the samples dealt round-robin over the shards. For comparing
# `stoker bench loader` on the same images as a folder and as shards.
#   bash bench/make_shards.sh FOLDER OUT_DIR [SHARDS=4]   ->  OUT_DIR/train-000000.tar ...
set -euo pipefail
folder=${1:?image folder}
out=${2:?output folder}
shards=${3:-4}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$out"
key=0
class=0
for dir in $(find "$folder" -mindepth 1 -maxdepth 1 -type d | sort); do
  while IFS= read -r image; do
    shard=$((key % shards))
    mkdir -p "$stage/$shard"
    name=$(printf '%06d' "$key")
    ext=${image##*.}
    ln -s "$(realpath "$image")" "$stage/$shard/$name.${ext,,}"
    printf '%d' "$class" > "$stage/$shard/$name.cls"
    key=$((key + 1))
  done < <(find "$dir" -type f \( -iname '*.jpg' -o -iname '*.jpeg' -o -iname '*.png' \) | sort)
  class=$((class + 1))
done
for ((s = 0; s < shards; s++)); do
  [ -d "$stage/$s" ] || continue
  (cd "$stage/$s" && ls | sort | tar --dereference -cf "$(realpath "$out")/$(printf 'train-%06d.tar' "$s")" -T -)
done
echo "$key images in $class classes -> $shards shards in $out"
