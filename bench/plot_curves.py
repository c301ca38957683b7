#!/usr/bin/python3
"""Training curves from the CSV file of -nn_monitor_csv as a PNG picture.

    build/examples/nnrun -options_file examples/fashion_mlp.opts -nn_monitor_csv mlp.csv
    /usr/bin/python3 bench/plot_curves.py mlp.csv mlp.png [--title "Fashion-MNIST MLP"]

Two panels over the epochs: the training and test loss (left) and the training and test accuracy
(right; left out for regression losses, whose accuracy fields are empty). Needs matplotlib
(Debian: apt-get install python3-matplotlib); PetNN itself does not.
"""
import argparse
import csv
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

COLUMNS = ["epoch", "train_loss", "train_acc", "test_loss", "test_acc", "lr", "seconds"]


def read(path):
    """The columns of the CSV file as lists (None for empty fields)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or any(c not in rows[0] for c in COLUMNS):
        sys.exit(f"{path}: not a -nn_monitor_csv file (expected the header {','.join(COLUMNS)})")
    return {c: [float(r[c]) if r[c] not in ("", None) else None for r in rows] for c in COLUMNS}


def panel(ax, cols, what, ylabel):
    """The training and test curves of one quantity; False if the file has none."""
    drawn = False
    for split, style in (("train", "o-"), ("test", "s--")):
        pts = [(e, v) for e, v in zip(cols["epoch"], cols[f"{split}_{what}"]) if v is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=f"{split} {what}")
            drawn = True
    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    if drawn:
        ax.legend()
    return drawn


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="file written by -nn_monitor_csv")
    ap.add_argument("png", help="picture to write")
    ap.add_argument("--title", default=None, help="title (default: the CSV file's name)")
    a = ap.parse_args()
    cols = read(a.csv)
    acc = any(v is not None for v in cols["train_acc"] + cols["test_acc"])
    fig, axes = plt.subplots(1, 2 if acc else 1, figsize=(10 if acc else 5.5, 4), squeeze=False)
    panel(axes[0][0], cols, "loss", "loss")
    if acc:
        panel(axes[0][1], cols, "acc", "accuracy")
    total = sum(s for s in cols["seconds"] if s is not None)
    fig.suptitle(f"{a.title or a.csv}: {len(cols['epoch'])} epochs, {total:.0f} s of training")
    fig.tight_layout()
    fig.savefig(a.png, dpi=100)
    print(f"{a.png}: {len(cols['epoch'])} epochs from {a.csv}")


if __name__ == "__main__":
    main()
