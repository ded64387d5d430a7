"""examples/train_imagefolder.py runs as a user would run it, on a folder the test makes."""
import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_imagefolder.py"


def test_the_example_trains_and_reports(jpeg_folder, tmp_path):
    done = subprocess.run([sys.executable, str(EXAMPLE), str(jpeg_folder), "--epochs", "2", "--batch-size", "4",
                           "--size", "32", "--accum-steps", "2", "--log", str(tmp_path / "monitor.csv")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "epoch 1: loss" in done.stdout
    assert "step time:" in done.stderr          # the watched loop's verdict
    assert "stoker monitor:" in done.stderr     # the monitor's summary at the end
    assert (tmp_path / "monitor.csv").read_text().startswith("timestamp")
