
# ---- settings you may change ----
TIMEOUT_SECONDS = 600.0  # a run still going after this long is stopped
HANG_SECONDS = 60.0  # kind "hang": a run still going after this long reproduces the bug
FLAKY_RUNS = 5  # kind "flaky": the model runs this many times in one session
SHOW = 10  # values printed per tensor

HERE = os.path.dirname(os.path.abspath(__file__))

# The ONNX Runtime configurations mutagraph runs, by backend name:
# (graph optimization level, execution providers in order of preference).
ORT_VARIANTS = {
    "ort": ("ORT_ENABLE_ALL", ["CPUExecutionProvider"]),
    "ort-noopt": ("ORT_DISABLE_ALL", ["CPUExecutionProvider"]),
    "ort-cuda": ("ORT_ENABLE_ALL", ["CUDAExecutionProvider", "CPUExecutionProvider"]),
}

# numpy element types of ONNX Runtime's input types.
ORT_INPUT_TYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(float16)": np.float16,
    "tensor(int8)": np.int8,
    "tensor(int16)": np.int16,
    "tensor(int32)": np.int32,
    "tensor(int64)": np.int64,
    "tensor(uint8)": np.uint8,
    "tensor(uint16)": np.uint16,
    "tensor(uint32)": np.uint32,
    "tensor(uint64)": np.uint64,
    "tensor(bool)": np.bool_,
    "tensor(string)": np.str_,
}


def is_ort(backend):
    return backend == "ort" or backend.startswith("ort-")


def load_npz(file_name):
    """The arrays of an .npz file next to this script, by tensor name.

    mutagraph stores a tensor named e.g. "conv/1:0" under the key "conv%2F1%3A0" (characters
    other than letters, digits, '_', '-', '.' are percent-encoded so that the archive unpacks
    anywhere); urllib.parse.unquote gives the name back.
    """
    with np.load(os.path.join(HERE, file_name), allow_pickle=False) as archive:
        return {urllib.parse.unquote(key): archive[key] for key in archive.files}


def describe(value):
    """dtype, shape and the first values of an output."""
    if not isinstance(value, np.ndarray):
        return "%s (not a tensor): %r" % (type(value).__name__, value)
    flat = value.reshape(-1)
    return "%s shape %s, first %d of %d: %s" % (
        value.dtype, list(value.shape), min(SHOW, flat.size), flat.size, flat[:SHOW].tolist())


class SetupError(Exception):
    """The model cannot be run as given (not a bug of the library)."""


def prepare_feeds(session, inputs):
    """The inputs the session takes, cast to the element types it declares."""
    feeds, notes = {}, []
    for arg in session.get_inputs():
        if arg.name not in inputs:
            raise SetupError("%s lacks the model input '%s'" % (INPUTS, arg.name))
        value = inputs[arg.name]
        if arg.type == "tensor(bfloat16)":
            raise SetupError("input '%s' is bfloat16, which numpy cannot hold" % arg.name)
        want = ORT_INPUT_TYPES.get(arg.type)
        if want is not None and value.dtype.type is not want:
            notes.append("input '%s' cast from %s to %s" % (arg.name, value.dtype, np.dtype(want)))
            value = value.astype(want)
        feeds[arg.name] = value
    for name in inputs:
        if name not in feeds:
            notes.append("%s holds '%s', which the model does not take (ignored)" % (INPUTS, name))
    return feeds, notes


def peak_rss_mib():
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / (1024.0 * 1024.0) if sys.platform == "darwin" else kib / 1024.0


def child_main(conn, model_path, inputs, opt_level, providers, runs):
    """Runs in a child process, so that a crash or a hang of the library cannot take this
    script down. Sends back one tuple: ("ok", runs, seconds, peak RSS, notes),
    ("error", message, notes) or ("setup", message, notes)."""
    notes = []
    try:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, opt_level)
        available = ort.get_available_providers()
        use = [p for p in providers if p in available]
        if use != providers:
            notes.append("execution providers %s not available here" %
                         [p for p in providers if p not in available])
        session = ort.InferenceSession(model_path, options, providers=use or None)
        feeds, feed_notes = prepare_feeds(session, inputs)
        notes += feed_notes
        names = [o.name for o in session.get_outputs()]
        results, seconds = [], []
        for _ in range(runs):
            start = time.perf_counter()
            values = session.run(names, feeds)
            seconds.append(time.perf_counter() - start)
            results.append(list(zip(names, values)))
        conn.send(("ok", results, seconds, peak_rss_mib(), notes))
    except SetupError as e:
        conn.send(("setup", str(e), notes))
    except Exception as e:  # any exception of onnxruntime is part of the story
        conn.send(("error", "%s: %s" % (type(e).__name__, e), notes))
    finally:
        conn.close()


class OrtRun:
    """What one ONNX Runtime run gave: status is "ok", "error" (an exception), "crash" (the
    process died), "hang" (stopped after the time limit) or "setup"."""

    def __init__(self, status, message="", outputs=None, runs=None, seconds=None, rss=None):
        self.status, self.message = status, message
        self.outputs = outputs or []  # [(name, value)] of the first run
        self.runs = runs or []  # every run (kind "flaky")
        self.seconds, self.rss = seconds or [], rss


def run_onnxruntime(variant, model_path, inputs, runs, timeout):
    opt_level, providers = ORT_VARIANTS.get(variant, ORT_VARIANTS["ort"])
    print("\n-- onnxruntime as '%s': graph_optimization_level=%s, providers=%s" %
          (variant, opt_level, providers))
    sys.stdout.flush()
    ctx = multiprocessing.get_context("spawn")
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(target=child_main,
                        args=(sender, model_path, inputs, opt_level, providers, runs))
    child.start()
    sender.close()
    try:
        ready = receiver.poll(timeout)
    except (EOFError, OSError):
        ready = True
    if not ready:
        child.kill()
        child.join()
        return OrtRun("hang", "no result after %.0f s (process stopped)" % timeout)
    try:
        message = receiver.recv()
    except (EOFError, OSError):
        message = None
    child.join(60)
    if message is None:
        code = child.exitcode
        if code is not None and code < 0:
            how = "killed by signal %d" % -code
        else:
            how = "exit code %s" % code
        return OrtRun("crash", "the process running onnxruntime died (%s)" % how)
    for note in message[-1]:
        print("   note:", note)
    if message[0] != "ok":
        return OrtRun(message[0], message[1])
    _, results, seconds, rss, _ = message
    return OrtRun("ok", outputs=results[0], runs=results, seconds=seconds, rss=rss)


def compare(actual, expected):
    """Error metrics of one output against the reference."""
    a, e = np.asarray(actual), np.asarray(expected)
    m = {"size": e.size, "mismatches": 0, "max_abs": 0.0, "max_rel": 0.0,
         "nan": 0, "inf": 0, "new_nonfinite": 0, "problem": None}
    if a.shape != e.shape:
        m["problem"] = "shape %s, expected %s" % (list(a.shape), list(e.shape))
        m["mismatches"] = max(a.size, e.size, 1)
        return m
    if a.dtype.kind not in "biuf" or e.dtype.kind not in "biuf":
        m["mismatches"] = int(np.count_nonzero(a != e))
        return m
    af, ef = a.astype(np.float64), e.astype(np.float64)
    m["nan"], m["inf"] = int(np.isnan(af).sum()), int(np.isinf(af).sum())
    m["new_nonfinite"] = int((~np.isfinite(af) & np.isfinite(ef)).sum())
    # Beyond tolerance: |actual - expected| > ATOL + RTOL * |expected| (NaN == NaN here).
    close = np.isclose(af, ef, rtol=RTOL, atol=ATOL, equal_nan=True)
    m["mismatches"] = int((~close).sum())
    finite = np.isfinite(af) & np.isfinite(ef)
    if finite.any():
        diff = np.abs(af[finite] - ef[finite])
        m["max_abs"] = float(diff.max())
        scale = np.maximum(np.abs(ef[finite]), np.finfo(np.float64).tiny)
        m["max_rel"] = float((diff / scale).max())
    return m


def summarize(m):
    if m["problem"]:
        return m["problem"]
    return ("max abs error %.6g, max rel error %.6g, %d of %d elements beyond atol + rtol*|expected| "
            "(rtol=%g, atol=%g), NaN %d, Inf %d" % (m["max_abs"], m["max_rel"], m["mismatches"],
                                                     m["size"], RTOL, ATOL, m["nan"], m["inf"]))


def check_outputs(label, outputs, expected):
    """Prints each output (and the reference's) and returns {name: metrics} of the compared
    ones; an output the reference has but `outputs` lacks counts as a mismatch."""
    metrics = {}
    got = dict(outputs)
    for name, value in outputs:
        print("   %s output '%s': %s" % (label, name, describe(value)))
        if expected is not None and name in expected:
            print("      expected (reference): %s" % describe(expected[name]))
            if isinstance(value, np.ndarray):
                metrics[name] = compare(value, expected[name])
                print("      vs expected: %s" % summarize(metrics[name]))
    for name in (expected or {}):
        if name not in got:
            print("   %s output '%s': missing; expected (reference): %s" %
                  (label, name, describe(expected[name])))
            metrics[name] = {"size": expected[name].size, "mismatches": 1, "new_nonfinite": 0,
                             "nan": 0, "inf": 0, "problem": "output missing"}
    return metrics


def first_mismatch(metrics):
    for name, m in metrics.items():
        if m["mismatches"]:
            return "output '%s': %s" % (name, summarize(m))
    return None


def first_new_nonfinite(metrics, outputs):
    for name, m in metrics.items():
        if m["new_nonfinite"]:
            return "output '%s': %d NaN/Inf where the reference is finite" % (name, m["new_nonfinite"])
    if EXPECTED is None:  # no reference: any NaN/Inf counts
        for name, value in outputs:
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                bad = int((~np.isfinite(value)).sum())
                if bad:
                    return "output '%s': %d NaN/Inf values" % (name, bad)
    return None


def runs_differ(runs):
    """The first difference between repeated runs, or None."""
    first = dict(runs[0])
    for i, run in enumerate(runs[1:], start=2):
        for name, value in run:
            a, b = np.asarray(first[name]), np.asarray(value)
            if a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
                return "output '%s' of run %d differs from run 1" % (name, i)
    return None


def judge_ort(variant, run, expected):
    """(reproduced, why) for a bug of ONNX Runtime itself."""
    who = "onnxruntime (%s)" % variant
    if run.status == "setup":
        return False, "%s could not be set up: %s" % (who, run.message)
    if KIND == "crash":
        if run.status in ("error", "crash"):
            return True, "%s failed: %s" % (who, run.message)
        if run.status == "hang":
            return False, "%s hung (%s) instead of failing" % (who, run.message)
        return False, "%s ran without error" % who
    if KIND in ("hang", "timeout"):
        if run.status == "hang":
            return True, "%s did not finish: %s" % (who, run.message)
        if run.status == "ok":
            return False, "%s finished in %.3f s" % (who, run.seconds[0])
        return False, "%s failed instead of hanging: %s" % (who, run.message)
    if run.status != "ok":
        return False, "%s failed (%s) instead of showing the %s" % (who, run.message, KIND)
    if KIND == "inconsistency":
        if expected is None:
            return False, "no reference outputs (%s) to compare with" % "expected.npz"
        metrics = check_quietly(run.outputs, expected)
        bad = first_mismatch(metrics)
        if bad:
            return True, "%s differs from the reference: %s" % (who, bad)
        return False, "%s matches the reference on every output (rtol=%g, atol=%g)" % (who, RTOL, ATOL)
    if KIND == "nan":
        bad = first_new_nonfinite(check_quietly(run.outputs, expected), run.outputs)
        if bad:
            return True, "%s output NaN/Inf: %s" % (who, bad)
        return False, "%s output no NaN/Inf where the reference is finite" % who
    if KIND == "flaky":
        diff = runs_differ(run.runs)
        if diff:
            return True, "%s gives different results on the same inputs: %s" % (who, diff)
        return False, "%s gave identical results in %d runs" % (who, len(run.runs))
    if KIND == "slow":
        return False, ("%s ran in %.3f s; this script does not judge slowness automatically "
                       "(see report.md for the comparison)" % (who, run.seconds[0]))
    if KIND in ("memory", "oom"):
        rss = "unknown" if run.rss is None else "%.0f MiB" % run.rss
        return False, ("%s peak resident memory %s; this script does not judge memory use "
                       "automatically (see report.md)" % (who, rss))
    return False, "unknown kind '%s'" % KIND


def check_quietly(outputs, expected):
    if expected is None:
        return {}
    metrics = {}
    got = dict(outputs)
    for name in expected:
        if name not in got:
            metrics[name] = {"mismatches": 1, "new_nonfinite": 0, "problem": "output missing"}
        elif isinstance(got[name], np.ndarray):
            metrics[name] = compare(got[name], expected[name])
    return metrics


def judge_recorded(backends, recorded, expected):
    """(reproduced, why) for a backend this script cannot run: do its recorded outputs differ
    from the reference as the bug says?"""
    who = "the recorded %s outputs (%s)" % (backends, FAULTY_OUTPUTS)
    if KIND in ("inconsistency", "nan"):
        if recorded is None:
            return False, "the bundle holds no recorded %s outputs" % backends
        outputs = list(recorded.items())
        if KIND == "inconsistency":
            if expected is None:
                return False, "no reference outputs (expected.npz) to compare with"
            bad = first_mismatch(check_quietly(outputs, expected))
            if bad:
                return True, "%s differ from the reference: %s" % (who, bad)
            return False, "%s match the reference" % who
        bad = first_new_nonfinite(check_quietly(outputs, expected), outputs)
        if bad:
            return True, "%s hold NaN/Inf: %s" % (who, bad)
        return False, "%s hold no NaN/Inf where the reference is finite" % who
    return False, ("a %s of %s cannot be shown without running it; use the commands in "
                   "report.md" % (KIND, backends))


def verdict(reproduced, why):
    print()
    print(("REPRODUCED: " if reproduced else "NOT REPRODUCED: ") + why)
    return 0 if reproduced else 1


def main():
    parser = argparse.ArgumentParser(description=TITLE)
    parser.add_argument("--model", help="run this ONNX file instead of %s" % MODEL)
    parser.add_argument("--timeout", type=float, help="seconds before a run is stopped")
    args = parser.parse_args()
    model_path = os.path.abspath(args.model) if args.model else os.path.join(HERE, MODEL)
    hang = KIND in ("hang", "timeout")
    timeout = args.timeout or (HANG_SECONDS if hang else TIMEOUT_SECONDS)

    print(TITLE)
    print("kind: %s; faulty backend: %s; model: %s" % (KIND, ", ".join(FAULTY), model_path))
    if not os.path.isfile(model_path):
        return verdict(False, "no model file %s" % model_path)
    inputs = load_npz(INPUTS)
    expected = load_npz(EXPECTED) if EXPECTED else None
    recorded = load_npz(FAULTY_OUTPUTS) if FAULTY_OUTPUTS else None
    for name, value in inputs.items():
        print("   input '%s': %s" % (name, describe(value)))
    if expected is None:
        print("   (no reference outputs: the reference interpreter failed on this model)")
    try:
        import onnxruntime
    except ImportError:
        return verdict(False, "onnxruntime is not installed: pip install onnxruntime numpy")
    print("onnxruntime %s, numpy %s, Python %s" %
          (onnxruntime.__version__, np.__version__, sys.version.split()[0]))
    runs = FLAKY_RUNS if KIND == "flaky" else 1

    ort_faulty = [b for i, b in enumerate(FAULTY) if is_ort(b) and b not in FAULTY[:i]]
    others = [b for b in FAULTY if not is_ort(b)]
    if ort_faulty:
        results = []
        for variant in ort_faulty:
            run = run_onnxruntime(variant, model_path, inputs, runs, timeout)
            report(run, expected)
            results.append(judge_ort(variant, run, expected))
        if recorded is not None:
            print("\n-- outputs recorded when mutagraph ran %s (%s)" %
                  (", ".join(FAULTY), FAULTY_OUTPUTS))
            check_outputs("recorded", list(recorded.items()), expected)
        hits = [why for ok, why in results if ok]
        if hits:
            return verdict(True, "; ".join(hits))
        return verdict(False, "; ".join(why for _, why in results))

    backends = ", ".join(others)
    print("\nThis script cannot run %s: ONNX Runtime runs the model as a cross-check, and the "
          "outputs %s gave when mutagraph ran it are shown from %s." %
          (backends, backends, FAULTY_OUTPUTS or "(none recorded)"))
    run = run_onnxruntime("ort", model_path, inputs, 1, timeout)
    report(run, expected)
    if run.status != "ok":
        cross = "ORT could not run the model either (%s)" % run.message
    elif expected is None:
        cross = "ORT ran the model (no reference outputs to compare with)"
    else:
        bad = first_mismatch(check_quietly(run.outputs, expected))
        cross = "ORT also differs from the reference (%s)" % bad if bad else \
            "ORT agrees with the reference"
    print("\n" + cross)
    if recorded is not None:
        print("\n-- recorded outputs of %s (%s)" % (backends, FAULTY_OUTPUTS))
        check_outputs("recorded", list(recorded.items()), expected)
    reproduced, why = judge_recorded(backends, recorded, expected)
    return verdict(reproduced, "%s; %s" % (why, cross))


def report(run, expected):
    if run.status != "ok":
        print("   onnxruntime %s: %s" % (run.status, run.message))
        return
    print("   ran in %s s" % ", ".join("%.4f" % s for s in run.seconds))
    check_outputs("onnxruntime", run.outputs, expected)


if __name__ == "__main__":
    sys.exit(main())
