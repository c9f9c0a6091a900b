"""The driver's supervising loop: starts the instances, restarts those whose process ended
before the time limit, forwards signals, writes `ray-launcher.json`, and sums the run up.

Ray's own restarts (actor `max_restarts`) are not used: Ray restarts an actor whose worker died,
not one whose subprocess exited (a SIGKILLed campaign leaves its worker alive), and a restarted
actor would have lost its process anyway. One loop handles both the same way: every instance is
polled about once a second, and one whose process ended (an exit status, or its actor, worker or
node lost) gets a fresh Runner with the same command line, `--time` being what is left of the
run; the campaign resumes from its directory.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import signal
import time
from pathlib import Path

import ray

from .runner import MIN_RUN_S, Plan, Runner

RECORD = "ray-launcher.json"
POLL_S = 1.0  # how often each instance is asked whether its process still runs
KILL_AFTER_S = 30.0  # SIGTERM at the time limit + stop_grace, SIGKILL this much later
MAX_DELAY_S = 10.0  # restart delays: 1, 2, 4, 8, then 10 s

log = logging.getLogger("mutagraph_ray")


@dataclasses.dataclass(frozen=True)
class Settings:
    instances: int
    time_s: float  # the whole run's length, wall clock
    seed: int  # instance iK gets seed + K
    cpus_per_instance: float
    max_restarts: int
    stop_grace_s: float
    address: str | None  # for the record only


def describe(run: dict) -> str:
    """How a run ended, in a word: 0, 1, SIGKILL, lost, ..."""
    if "lost" in run:
        return "lost"
    if "error" in run:
        return "not started"
    rc = run.get("returncode")
    if rc is None:
        return "running"
    return signal.Signals(-rc).name if rc < 0 else str(rc)


def iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(t))


@dataclasses.dataclass
class Instance:
    name: str
    seed: int
    state: str = "waiting"  # waiting, starting, running; finished, stopped, failed at the end
    restarts: int = 0
    runs: list = dataclasses.field(default_factory=list)  # one dict per start, as recorded
    error: str | None = None
    actor: object = None
    ref: object = None  # the start or poll call in flight
    start_at: float = 0.0  # when a waiting instance is started

    def record(self, sync_dir: Path) -> dict:
        last = self.runs[-1] if self.runs else {}
        return {"dir": str(sync_dir / self.name), "log": str(sync_dir / f"ray-{self.name}.log"),
                "seed": self.seed, "state": self.state, "restarts": self.restarts,
                "exit_codes": [r.get("returncode") for r in self.runs if "end" in r],
                "pid": last.get("pid") if self.state == "running" else None,
                "node": last.get("node"), "runs": self.runs, "error": self.error}


class Launcher:
    def __init__(self, settings: Settings, plan: Plan, env: dict) -> None:
        self.settings, self.plan, self.env = settings, plan, env
        self.sync_dir = Path(plan.sync_dir)
        self.t0 = time.time()
        self.deadline = self.t0 + settings.time_s
        self.instances = [Instance(f"i{k}", settings.seed + k) for k in range(settings.instances)]
        self.signals = 0  # SIGINT / SIGTERM received
        self.signals_handled = 0
        self.forced = 0  # past the time limit and the grace: 1 once SIGTERM sent, 2 SIGKILL
        self.last_record = ""

    def on_signal(self, _signum: int, _frame) -> None:
        self.signals += 1

    def run(self) -> None:
        """Runs every instance to its end."""
        for inst in self.instances:
            self.start(inst)
        while any(i.state in ("waiting", "starting", "running") for i in self.instances):
            tick = time.time()
            self.handle_signals()
            self.enforce_time_limit()
            for inst in self.instances:
                if inst.state == "waiting" and time.time() >= inst.start_at:
                    self.start(inst)
                elif inst.state == "running" and inst.ref is None:
                    inst.ref = inst.actor.poll.remote()
            busy = [i for i in self.instances if i.ref is not None]
            if busy:
                ray.wait([i.ref for i in busy], num_returns=len(busy), timeout=POLL_S)
            for inst in busy:
                self.collect(inst)
            self.write_record()
            time.sleep(max(0.0, POLL_S - (time.time() - tick)))
        self.write_record(final=True)

    # Starting and ending runs ------------------------------------------------------------------

    def start(self, inst: Instance) -> None:
        if inst.runs:
            inst.restarts += 1
        inst.actor = Runner.options(num_cpus=self.settings.cpus_per_instance,
                                    scheduling_strategy="SPREAD").remote()
        inst.ref = inst.actor.start.remote(self.plan, inst.name, inst.seed, self.deadline,
                                           self.env)
        inst.state = "starting"
        inst.runs.append({})

    def collect(self, inst: Instance) -> None:
        """Takes the answer of the instance's call in flight, if it came."""
        ready, _ = ray.wait([inst.ref], timeout=0)
        if not ready:
            return
        ref, inst.ref = inst.ref, None
        try:
            answer = ray.get(ref)
        except ray.exceptions.ActorUnavailableError:
            return  # transient: asked again next round
        except ray.exceptions.RayError as e:
            first_line = (str(e).strip().splitlines() or [type(e).__name__])[0]
            self.ended(inst, time.time(), lost=first_line[:300])
            return
        if inst.state == "starting":
            self.started(inst, answer)
        elif answer is not None:
            self.ended(inst, answer["end"], returncode=answer["returncode"])

    def started(self, inst: Instance, answer: dict) -> None:
        run = inst.runs[-1]
        if "pid" not in answer:  # it did not start: free the actor's CPUs
            ray.kill(inst.actor)
            inst.actor = None
        if "error" in answer:
            run["error"] = answer["error"]
            self.fail(inst, f"{inst.name} could not start: {answer['error']}")
        elif "skipped" in answer:
            inst.runs.pop()
            inst.restarts -= 1
            inst.state = "finished"
            log.info("%s: not restarted, the time limit is near (%s)", inst.name,
                     answer["skipped"])
        else:
            run.update(answer)
            inst.state = "running"
            restart = f", restart {inst.restarts}/{self.settings.max_restarts}"
            log.info("%s: started on %s (pid %d, %.0f s left)%s", inst.name, answer["host"],
                     answer["pid"], answer["time_s"], restart if inst.restarts else "")
            if self.signals:  # stopped while it was starting
                inst.actor.signal.remote(signal.SIGINT)

    def ended(self, inst: Instance, end: float, returncode: int | None = None,
              lost: str | None = None) -> None:
        run = inst.runs[-1]
        run["end"] = end
        if lost is None:
            run["returncode"] = returncode
            if returncode < 0:
                run["signal"] = signal.Signals(-returncode).name
        else:
            run["lost"] = lost
            if inst.actor is not None:
                ray.kill(inst.actor)  # whatever is left of it
        inst.actor = None
        how = describe(run)
        took = end - run.get("start", end)
        left = self.deadline - end
        if self.signals:
            inst.state = "stopped"
            log.info("%s: stopped (%s) after %.0f s", inst.name, how, took)
        elif returncode == 0:
            inst.state = "finished"
            log.info("%s: finished after %.0f s", inst.name, took)
        elif returncode == 2:
            self.fail(inst, f"{inst.name}: mutagraph refused the command line (exit 2)")
        elif left < MIN_RUN_S:
            inst.state = "finished"
            log.warning("%s: ended (%s) %.0f s before the time limit; not restarted",
                        inst.name, how, left)
        elif inst.restarts >= self.settings.max_restarts:
            self.fail(inst, f"{inst.name}: ended ({how}) after {inst.restarts} restarts, the "
                            f"most --max-restarts allows")
        else:
            delay = min(2.0 ** inst.restarts, MAX_DELAY_S)
            inst.state, inst.start_at = "waiting", time.time() + delay
            log.warning("%s: ended (%s%s) after %.0f s, %.0f s before the time limit; "
                        "restarting in %.0f s", inst.name, how, f": {lost}" if lost else "",
                        took, left, delay)

    def fail(self, inst: Instance, why: str) -> None:
        """Gives up on the instance, saying why and how its output ends."""
        logfile = self.sync_dir / f"ray-{inst.name}.log"
        inst.state, inst.error = "failed", f"{why} (log: {logfile})"
        tail = []
        if logfile.exists():
            tail = logfile.read_text(errors="replace").splitlines()[-5:]
        log.error("%s%s", inst.error,
                  "; it ends with:\n" + "\n".join("    " + line for line in tail) if tail else "")

    # Signals and the time limit ----------------------------------------------------------------

    def handle_signals(self) -> None:
        """First signal: SIGINT to every instance (each ends cleanly), none restarted. Second:
        SIGINT again (each ends at once) and the instances still starting are cancelled. Third:
        every actor killed (the processes with them)."""
        if self.signals == self.signals_handled:
            return
        self.signals_handled = self.signals
        log.warning("signal received: stopping every instance%s",
                    " at once" if self.signals > 1 else " (a second signal: at once)")
        for inst in self.instances:
            if inst.state == "waiting":
                inst.state = "stopped"
            elif inst.actor is not None and (
                    self.signals >= 3 or (inst.state == "starting" and self.signals == 2)):
                ray.kill(inst.actor)  # its call in flight fails: collect() ends the run
            elif inst.state == "running":
                inst.actor.signal.remote(signal.SIGINT)

    def enforce_time_limit(self) -> None:
        """SIGTERM to the instances still running stop_grace past the time limit, SIGKILL 30 s
        later."""
        over = time.time() - self.deadline - self.settings.stop_grace_s
        step = 2 if over >= KILL_AFTER_S else 1 if over >= 0 else 0
        if step <= self.forced:
            return
        self.forced = step
        sig = signal.SIGKILL if step == 2 else signal.SIGTERM
        for inst in self.instances:
            if inst.state == "running":
                log.warning("%s: still running %.0f s after the time limit: %s", inst.name,
                            time.time() - self.deadline, sig.name)
                inst.actor.signal.remote(sig)

    # The record and the summary ----------------------------------------------------------------

    def write_record(self, final: bool = False) -> None:
        """Writes SYNC/ray-launcher.json atomically when it changed."""
        s = self.settings
        rec = {"version": 1, "sync_dir": str(self.sync_dir), "binary": self.plan.binary,
               "address": s.address, "launcher_pid": os.getpid(), "started": iso(self.t0),
               "started_unix": self.t0, "deadline": iso(self.deadline),
               "deadline_unix": self.deadline, "time_s": s.time_s, "instances_n": s.instances,
               "cpus_per_instance": s.cpus_per_instance, "max_restarts": s.max_restarts,
               "done": final, "signals": self.signals,
               "instances": {i.name: i.record(self.sync_dir) for i in self.instances}}
        text = json.dumps(rec, indent=2) + "\n"
        if text == self.last_record:
            return
        path = self.sync_dir / RECORD
        tmp = path.with_name(f".{RECORD}.{os.getpid()}.tmp")
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        self.last_record = text

    def summary(self) -> str:
        rows = [("instance", "state", "restarts", "exits", "iterations", "unique findings")]
        for inst in self.instances:
            try:
                stats = json.loads((self.sync_dir / inst.name / "stats.json").read_text())
            except (OSError, ValueError):
                stats = {}
            rows.append((inst.name, inst.state, str(inst.restarts),
                         ", ".join(describe(r) for r in inst.runs if "end" in r) or "-",
                         str(stats.get("iterations", "-")),
                         str(stats.get("unique_findings", "-"))))
        widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
        lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
        lines.append(f"record: {self.sync_dir / RECORD}")
        if self.plan.sync_flags:
            lines.append(f"report: {self.plan.binary} report {self.sync_dir}")
        else:  # one report per instance directory
            lines += [f"report: {self.plan.binary} report {self.sync_dir / i.name}"
                      for i in self.instances if (self.sync_dir / i.name / "state.json").exists()]
        return "\n".join(lines)
