"""copy_notebooks.py NOTEBOOKS WORKSPACE INFO: copy each NN-*.ipynb that
WORKSPACE lacks, with the kernel's language_info (so opening an untouched
copy does not mark it changed), and name the copies whose source changed
since, on stdout (queuekit workspace prepare)."""
import glob, hashlib, json, os, sys
src_dir, ws, info_path = sys.argv[1:4]
with open(info_path) as f:
    language_info = json.load(f)["language_info"]
copied, stale = [], []
for src in sorted(glob.glob(os.path.join(src_dir, "[0-9][0-9]-*.ipynb"))):
    name = os.path.basename(src)
    dest = os.path.join(ws, name)
    stamp = os.path.join(ws, ".sources", name + ".sha256")
    with open(src, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()
    if os.path.exists(dest):
        if os.path.exists(stamp) and open(stamp).read().strip() != digest:
            stale.append(name)
        continue
    nb = json.loads(data)
    nb.setdefault("metadata", {})["language_info"] = language_info
    tmp = dest + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        # As nbformat (and so JupyterLab) writes a notebook.
        f.write(json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n")
    os.replace(tmp, dest)
    with open(stamp, "w") as f:
        f.write(digest + "\n")
    copied.append(name)
if copied:
    print("copied " + ", ".join(copied) + " into " + ws)
if stale:
    print("notebooks/ has newer versions of " + ", ".join(stale)
          + "; your copies are kept (make reset-notebooks replaces them and keeps yours in .previous/)")
