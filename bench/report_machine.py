"""The start of the "## Machine" section the training comparisons (compare_train.sh,
compare_convnet.sh) write: a warning when other work kept the CPUs busy, the date, the cores
and the load averages around the runs. Reads the variables the scripts pass in the environment
(BUSY_*, LOAD_*, DATE, NPROC, CPU_MODEL)."""

TUNED = "PyTorch, stoker's settings"


def machine_head(env) -> list[str]:
    lines = ["## Machine", ""]
    busy = [f"{env[key]} % before {name}"
            for name, key in (("stoker", "BUSY_STOKER"), ("PyTorch", "BUSY_PYTORCH"), (TUNED, "BUSY_TUNED"))
            if env[key].isdigit() and int(env[key]) > 10]
    if busy:
        lines += [f"**Warning: the CPUs were busy with other work ({', '.join(busy)}), so these numbers are "
                  "not reliable: multi-threaded CPU training slows down sharply when its threads share cores "
                  "with other processes.**", ""]
    lines += [f"- date: {env['DATE']}",
              f"- nproc: {env['NPROC']}; CPU: {env['CPU_MODEL']}",
              f"- load average (1/5/15 min) before the runs: {env['LOAD_START']}; before stoker: {env['LOAD_STOKER']}; "
              f"before PyTorch: {env['LOAD_PYTORCH']}; before {TUNED}: {env['LOAD_TUNED']}; after: {env['LOAD_END']}"]
    return lines
