"""NumPy benchmarks: gradient time of plain-NumPy programs as a multiple of the primal's.

Programs (``numpy_programs.py``): a 2-layer MLP loss, logistic regression (``np.logaddexp`` and
a log-sum-exp written out), softmax cross-entropy with ``axis=1, keepdims=True``, a 200-step
loop on a 16-vector, and a Gaussian log-likelihood through ``np.linalg.solve`` / ``slogdet``.

Methods: ``wengert.grad``, and when importable ``autograd.grad`` and ``jax.grad`` (the same
source with ``np`` rebound to ``autograd.numpy`` / ``jax.numpy``), ``jax.jit(jax.grad)``, and
torch (the same maths in torch, float64 leaves, ``torch.autograd.grad``). The primal is the
NumPy function itself. Measurement as in ``bench_reverse.py`` (whose helpers this reuses): per
call the median of repeats, the ratio the median of per-pair ratios to a primal repeat run just
before, every gradient checked against central finite differences of the NumPy primal over
every coordinate before anything is timed, first call on a fresh copy of the programs. Each
method runs in a process of its own (``--method`` runs one here): imported peers enlarge the
heap that every garbage collection walks, which slows whatever is measured after them.

Run ``python3 benchmarks/bench_numpy.py [--markdown] [--quick] [--no-peers]``; it is never part
of the tests.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# One thread per library unless the environment says otherwise: on a small machine shared with
# other work, multi-threaded BLAS / XLA / torch kernels spin and wait (a 256×32 @ 32×64 matmul
# took 70 µs with two OpenBLAS threads under load, 20 µs with one). Set before numpy imports.
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
for _var in THREAD_VARS:
    os.environ.setdefault(_var, "1")
os.environ.setdefault("XLA_FLAGS",
                      "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
PROGRAMS_FILE = HERE / "numpy_programs.py"

if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    if not os.environ.get("PYTHONPATH"):  # PYTHONPATH, when set, picks the wengert measured
        sys.path.insert(0, str(HERE.parent / "src"))

from bench_python import wengert_origin  # noqa: E402
from bench_reverse import (  # noqa: E402
    GradientMismatch,
    ProgramLoader,
    Settings,
    Unavailable,
    environment,
    fmt_ratio,
    fmt_time,
    format_markdown,
    format_text,
    time_against,
    time_per_call,
    timed_once,
)

FD_RTOL = 1e-5  # max |grad - fd| over an argument, relative to max |fd| of that argument
FD_COORDINATES = 400  # coordinates of an argument checked by finite differences, at most


# --- the programs and their data ---------------------------------------------------------------


def _data() -> dict[str, tuple[Any, ...]]:
    """Arguments of each program (float64, seeded)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((256, 32))
    mlp = (rng.standard_normal((32, 64)) / math.sqrt(32), 0.1 * rng.standard_normal(64),
           rng.standard_normal((64, 1)) / 8.0, np.array([0.1]), X,
           np.sin(X[:, :1]) + 0.1 * rng.standard_normal((256, 1)))
    Xl = rng.standard_normal((1000, 20))
    w_true = rng.standard_normal(20)
    yl = np.where(Xl @ w_true + rng.standard_normal(1000) > 0, 1.0, -1.0)
    logistic = (0.3 * rng.standard_normal(20), Xl, yl)
    labels = np.eye(10)[rng.integers(0, 10, 128)]
    softmax = (2.0 * rng.standard_normal((128, 10)), labels)
    ode = (rng.uniform(-1.0, 1.0, 16), rng.uniform(0.5, 1.5, 16))
    B = rng.standard_normal((30, 30)) / math.sqrt(30)
    gauss = (B, 0.1 * rng.standard_normal(30), rng.standard_normal((50, 30)) @ B.T)
    Xs = rng.standard_normal((32, 64))
    mlp_small = (rng.standard_normal((64, 64)) / 8.0, 0.1 * rng.standard_normal(64),
                 rng.standard_normal((64, 1)) / 8.0, np.array([0.1]), Xs,
                 np.sin(Xs[:, :1]))
    Xb = rng.standard_normal((1024, 256))
    mlp_large = (rng.standard_normal((256, 1024)) / 16.0, 0.1 * rng.standard_normal(1024),
                 rng.standard_normal((1024, 1)) / 32.0, np.array([0.1]), Xb,
                 np.sin(Xb[:, :1]))
    Xg = rng.standard_normal((1000, 8))
    gmm = (rng.standard_normal((10, 8)), np.log(np.full(10, 0.1)), Xg)
    elements = (np.sin(np.linspace(0.1, 6.0, 1000)) ** 2,)
    return {"mlp_loss": mlp, "mlp_small": mlp_small, "mlp_large": mlp_large,
            "logistic_nll": logistic,
            "logistic_nll_lse": logistic, "softmax_xent": softmax, "ode_loop": ode,
            "gaussian_nll": gauss, "gmm_loglik": gmm, "element_loop": elements,
            "stencil": elements}


def _torch_programs(torch: Any) -> dict[str, Callable[..., Any]]:
    """The same maths in torch's API."""

    def mlp_loss(W1, b1, W2, b2, X, y):
        h = torch.tanh(X @ W1 + b1)
        out = h @ W2 + b2
        return torch.mean((out - y) ** 2)

    def logistic_nll(w, X, y):
        z = -y * (X @ w)
        return torch.sum(torch.logaddexp(torch.zeros_like(z), z))

    def logistic_nll_lse(w, X, y):
        z = -y * (X @ w)
        m = torch.clamp(z, min=0.0)
        return torch.sum(m + torch.log(torch.exp(-m) + torch.exp(z - m)))

    def softmax_xent(logits, labels):
        m = torch.max(logits, dim=1, keepdim=True).values
        shifted = logits - m
        log_z = torch.log(torch.sum(torch.exp(shifted), dim=1, keepdim=True))
        return -torch.mean(torch.sum(labels * (shifted - log_z), dim=1))

    def ode_loop(x, w):
        dt = 0.01
        for _ in range(200):
            x = x + dt * torch.sin(x) * w
        return torch.sum(x ** 2)

    def gaussian_nll(B, mu, Y):
        n, d = Y.shape
        S = B @ B.T + 0.5 * torch.eye(d, dtype=B.dtype)
        R = Y - mu
        sol = torch.linalg.solve(S, R.T)
        sign, logdet = torch.linalg.slogdet(S)
        return 0.5 * torch.sum(R.T * sol) + 0.5 * n * logdet + 0.5 * n * d * math.log(2 * math.pi)

    def gmm_loglik(means, log_w, X):
        d2 = torch.sum((X[:, None, :] - means[None, :, :]) ** 2, dim=2)
        return torch.sum(torch.logsumexp(log_w - 0.5 * d2, dim=1))

    def element_loop(x):
        s = 0.0
        for i in range(len(x)):
            s = s + torch.sin(x[i]) * x[i]
        return s

    def stencil(x):
        y = torch.zeros_like(x)
        for i in range(1, len(x) - 1):
            y[i] = x[i - 1] - 2.0 * x[i] + x[i + 1]
        return torch.sum(y * y)

    out = {f.__name__: f for f in (mlp_loss, logistic_nll, logistic_nll_lse, softmax_xent,
                                   ode_loop, gaussian_nll, gmm_loglik, element_loop,
                                   stencil)}
    out["mlp_small"] = mlp_loss
    out["mlp_large"] = mlp_loss
    return out


@dataclass(frozen=True)
class Program:
    """One function of ``numpy_programs.py`` and the arguments it is differentiated along."""

    label: str
    name: str
    argnums: tuple[int, ...]


PROGRAMS: tuple[Program, ...] = (
    Program("MLP loss (256×32 → 64 → 1)", "mlp_loss", (0, 1, 2, 3)),
    Program("logistic NLL, np.logaddexp (1000×20)", "logistic_nll", (0,)),
    Program("logistic NLL, max/exp/log/sum (1000×20)", "logistic_nll_lse", (0,)),
    Program("softmax cross-entropy (128×10)", "softmax_xent", (0,)),
    Program("200-step loop on a 16-vector", "ode_loop", (0, 1)),
    Program("Gaussian NLL, solve + slogdet (30×30)", "gaussian_nll", (0, 1)),
    Program("MLP small (batch 32, 64 → 64 → 1)", "mlp_small", (0, 1, 2, 3)),
    Program("MLP large (batch 1024, 256 → 1024 → 1)", "mlp_large", (0, 1, 2, 3)),
    Program("GMM log-sum-exp (N 1000, K 10, d 8)", "gmm_loglik", (0, 1)),
    Program("Python loop over 1000 array elements", "element_loop", (0,)),
    Program("in-place stencil, 1000 elements", "stencil", (0,)),
)


# --- checking ----------------------------------------------------------------------------------


def finite_difference(f: Callable[..., Any], args: Sequence[Any],
                      argnums: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """Central finite differences of ``f`` along every coordinate of each of ``argnums``
    (of at most ``FD_COORDINATES`` of them, drawn at random, for a large argument: the others
    are NaN, which ``check_gradient`` skips)."""
    out = []
    rng = np.random.default_rng(1)
    for i in argnums:
        base = np.asarray(args[i], dtype=float)
        grad = np.full(base.shape, np.nan)
        coords = list(np.ndindex(base.shape))
        if len(coords) > FD_COORDINATES:
            coords = [coords[k] for k in rng.choice(len(coords), FD_COORDINATES, replace=False)]
        for idx in coords:
            h = 1e-6 * max(1.0, abs(base[idx]))
            up, down = base.copy(), base.copy()
            up[idx] += h
            down[idx] -= h
            args_up, args_down = list(args), list(args)
            args_up[i], args_down[i] = up, down
            grad[idx] = (float(f(*args_up)) - float(f(*args_down))) / (2 * h)
        out.append(grad)
    return tuple(out)


def check_gradient(grads: Any, expected: tuple[np.ndarray, ...]) -> None:
    """Raise ``GradientMismatch`` unless each part of ``grads`` matches ``expected``."""
    parts = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
    if len(parts) != len(expected):
        raise GradientMismatch(f"expected {len(expected)} gradients, got {len(parts)}")
    for k, (g, e) in enumerate(zip(parts, expected)):
        g = np.asarray(g.detach() if hasattr(g, "detach") else g, dtype=float)
        if g.shape != e.shape:
            raise GradientMismatch(f"gradient {k}: shape {g.shape} != {e.shape}")
        checked = ~np.isnan(e)
        g, e = g[checked], e[checked]
        err = float(np.max(np.abs(g - e), initial=0.0)) / max(float(np.max(np.abs(e),
                                                                          initial=0.0)), 1e-12)
        if not err <= FD_RTOL:
            raise GradientMismatch(f"gradient {k}: max error {err:.1e} relative to max |fd| "
                                   f"(rtol {FD_RTOL:g})")


# --- the methods -------------------------------------------------------------------------------


@dataclass
class Trial:
    """``first``: the gradient as a user's first call computes it (transform, trace or compile
    included); ``then()``, after it: the call to time."""

    first: Callable[[], Any]
    then: Callable[[], Callable[[], Any]]


Fresh = Callable[[], Trial]


class Loader(ProgramLoader):
    """Fresh copies of ``numpy_programs.py``, ``np`` optionally rebound."""

    def __init__(self) -> None:
        super().__init__()
        self._source = PROGRAMS_FILE.read_text()

    def load_np(self, np_ns: Any = None) -> types.ModuleType:
        module = self.load()
        if np_ns is not None:
            module.np = np_ns
        return module


def _same(call: Callable[[], Any]) -> Trial:
    return Trial(call, lambda: call)


def prepare_wengert(program: Program, args: tuple[Any, ...], loader: Loader) -> Fresh:
    """``wengert.grad(f, argnums)(*args)``; the wrapper built once for the timed calls."""
    import wengert

    def fresh() -> Trial:
        f = getattr(loader.load_np(), program.name)

        def then() -> Callable[[], Any]:
            g = wengert.grad(f, argnums=program.argnums)
            return lambda: g(*args)

        return Trial(lambda: wengert.grad(f, argnums=program.argnums)(*args), then)

    return fresh


def prepare_autograd(program: Program, args: tuple[Any, ...], loader: Loader) -> Fresh:
    """``autograd.grad`` of the same source, ``np`` rebound to ``autograd.numpy``."""
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError as e:
        raise Unavailable("not installed") from e

    def fresh() -> Trial:
        g = autograd.grad(getattr(loader.load_np(anp), program.name), argnum=program.argnums)
        return _same(lambda: g(*args))

    return fresh


def prepare_jax(program: Program, args: tuple[Any, ...], loader: Loader,
                jit: bool = False) -> Fresh:
    """``jax.grad`` of the same source, ``np`` rebound to ``jax.numpy``, float64, arguments
    held as jax arrays; with ``jit``, ``jax.jit(jax.grad(f))`` (the first call compiles)."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as e:
        raise Unavailable("not installed") from e
    jax.config.update("jax_enable_x64", True)
    jargs = tuple(jnp.asarray(a) for a in args)

    def fresh() -> Trial:
        g = jax.grad(getattr(loader.load_np(jnp), program.name), argnums=program.argnums)
        if jit:
            g = jax.jit(g)
        return _same(lambda: jax.block_until_ready(g(*jargs)))

    return fresh


def prepare_jax_jit(program: Program, args: tuple[Any, ...], loader: Loader) -> Fresh:
    """``jax.jit(jax.grad(f))``."""
    return prepare_jax(program, args, loader, jit=True)


def prepare_torch(program: Program, args: tuple[Any, ...], loader: Loader) -> Fresh:
    """The torch spelling, float64 leaves with ``requires_grad``, ``torch.autograd.grad``."""
    try:
        import torch
    except ImportError as e:
        raise Unavailable("not installed") from e
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    f = _torch_programs(torch)[program.name]
    targs = [torch.from_numpy(np.array(a, dtype=np.float64)) for a in args]
    for i in program.argnums:
        targs[i].requires_grad_(True)
    leaves = [targs[i] for i in program.argnums]
    return lambda: _same(lambda: torch.autograd.grad(f(*targs), leaves))


@dataclass
class Method:
    key: str  # its name on the command line (``--method``)
    label: str
    prepare: Callable[[Program, tuple[Any, ...], Loader], Fresh]
    peer: bool = False
    jit: bool = False


METHODS: tuple[Method, ...] = (
    Method("wengert", "wengert.grad", prepare_wengert),
    Method("autograd", "autograd.grad", prepare_autograd, peer=True),
    Method("jax", "jax.grad", prepare_jax, peer=True),
    Method("jax-jit", "jax.jit(jax.grad)", prepare_jax_jit, peer=True, jit=True),
    Method("torch", "torch autograd", prepare_torch, peer=True),
)
PRIMAL = "primal (NumPy)"


# --- the run -----------------------------------------------------------------------------------


@dataclass
class Row:
    program: Program
    method: str
    per_call: float | None = None
    ratio: float | None = None
    first_call: float | None = None
    note: str = ""
    failed: bool = False


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(r.failed for r in self.rows)


def _error(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"[:120]


def measure(program: Program, method: Method, args: tuple[Any, ...],
            expected: tuple[np.ndarray, ...], primal: Callable[[], Any], loader: Loader,
            settings: Settings) -> Row:
    """Check one method's gradient, then time its first call (median of ``first_calls`` fresh
    copies for wengert, one for peers) and its later calls against the primal."""
    row = Row(program, method.label)
    is_wengert = method.label == "wengert.grad"
    try:
        fresh = method.prepare(program, args, loader)
        samples = []
        for _ in range(settings.first_calls if is_wengert else 1):
            trial = fresh()
            t, out = timed_once(trial.first)
            check_gradient(out, expected)
            samples.append(t)
        call = trial.then()
        check_gradient(call(), expected)
    except Unavailable as e:
        row.note = str(e)
        return row
    except GradientMismatch as e:
        row.note, row.failed = f"WRONG GRADIENT: {e}", is_wengert
        return row
    except Exception as e:  # a refusal is a result too
        row.note, row.failed = f"refused: {_error(e)}", is_wengert
        return row
    row.first_call = statistics.median(samples)
    row.per_call, row.ratio = time_against(call, primal, settings)
    return row


def run(programs: Sequence[Program], methods: Sequence[Method], settings: Settings,
        progress: Callable[[str], None] = lambda s: None) -> Report:
    """Measure ``methods`` on ``programs`` in this process (the primal with each program)."""
    report = Report()
    data = _data()
    loader = Loader()
    try:
        for program in programs:
            args = data[program.name]
            f = getattr(loader.load_np(), program.name)
            expected = finite_difference(f, args, program.argnums)
            progress(f"{program.label}: primal")

            def primal(f: Callable[..., Any] = f, args: tuple[Any, ...] = args) -> Any:
                return f(*args)

            report.rows.append(Row(program, PRIMAL, time_per_call(primal, settings), 1.0))
            for method in methods:
                progress(f"{program.label}: {method.label}")
                report.rows.append(measure(program, method, args, expected, primal, loader,
                                           settings))
    finally:
        loader.close()
    return report


def run_isolated(argv: Sequence[str], programs: Sequence[Program],
                 methods: Sequence[Method]) -> Report:
    """Each method measured in a fresh process of this script (``--method KEY --json``).

    A process that has imported jax and torch tracks about 3× as many objects as one with
    NumPy and wengert only, and every full garbage collection walks them all: autograd's
    200-step loop took 9 ms alone and 21 ms with jax and torch imported. In one process,
    whichever method runs after the peers are imported pays for their heap. The primal rows
    are those measured in the first method's process.
    """
    rows: dict[tuple[str, str], Row] = {}
    for method in methods:
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv,
                               "--method", method.key, "--json"],
                              stdout=subprocess.PIPE, text=True)
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError:
            data = [{"program": p.name, "method": method.label, "failed": True,
                     "note": f"process failed (status {proc.returncode})"} for p in programs]
        by_name = {p.name: p for p in programs}
        for r in data:
            program = by_name[r.pop("program")]
            rows.setdefault((program.name, r["method"]), Row(program, **r))
    labels = [PRIMAL, *(m.label for m in methods)]
    return Report([rows[p.name, label] for p in programs for label in labels
                   if (p.name, label) in rows])


def to_json(report: Report) -> str:
    return json.dumps([{**{k: v for k, v in asdict(r).items() if k != "program"},
                        "program": r.program.name} for r in report.rows])


def table(report: Report) -> tuple[list[str], list[list[str]]]:
    header = ["program", "method", "per call", "× primal", "first call", "note"]
    rows = [[r.program.label, r.method, fmt_time(r.per_call), fmt_ratio(r.ratio),
             fmt_time(r.first_call), r.note] for r in report.rows]
    return header, rows


def render(report: Report, markdown: bool) -> str:
    fmt = format_markdown if markdown else format_text
    threads = f"{os.cpu_count()} CPUs, " + ", ".join(f"{v}={os.environ.get(v)}"
                                                     for v in THREAD_VARS)
    return "\n".join([f"{environment()}, numpy {np.__version__}, {threads}", wengert_origin(),
                      "", fmt(*table(report))])


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--quick", action="store_true", help="shorter timings (noisier)")
    parser.add_argument("--no-peers", action="store_true", help="skip autograd, jax and torch")
    parser.add_argument("--no-jit", action="store_true", help="skip jax.jit")
    parser.add_argument("--program", action="append", default=None,
                        choices=[p.name for p in PROGRAMS], help="only this program (repeatable)")
    parser.add_argument("--method", action="append", default=None,
                        choices=[m.key for m in METHODS],
                        help="only this method, in this process (repeatable)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run, print the report; 1 if a wengert gradient was wrong or refused.

    Without ``--method``, each method is measured in a process of its own.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    settings = Settings()
    if args.quick:
        settings.min_time, settings.repeats = 0.05, 5
    programs = [p for p in PROGRAMS if args.program is None or p.name in args.program]
    progress = lambda s: print(f"  ... {s}", file=sys.stderr, flush=True)
    if args.method:
        methods = [m for m in METHODS if m.key in args.method]
        report = run(programs, methods, settings, progress)
    else:
        methods = [m for m in METHODS if not (m.peer and args.no_peers)
                   and not (m.jit and args.no_jit)]
        passed = [a for a in argv if a != "--markdown"]
        report = run_isolated(passed, programs, methods)
    print(to_json(report) if args.json else render(report, args.markdown))
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
