"""The summary of a set of runs: counts, defects by kind, examples, signatures, the table."""

from __future__ import annotations

import collections

from .classify import CLASSES, DEFECTS


class Summary:
    def __init__(self, opts, manifest):
        self.opts = opts
        self.counts = {c: collections.Counter() for c in opts.commands}
        self.by_kind = collections.defaultdict(collections.Counter)
        self.examples = collections.defaultdict(list)
        self.sigs = collections.defaultdict(dict)
        self.big = []
        self.wall = collections.Counter()
        self.n = 0
        self.ninputs = len(manifest)

    def add(self, r):
        self.n += 1
        cls = r["class"]
        self.counts[r["command"]][cls] += 1
        self.wall[r["command"]] += r["wall_s"]
        self.by_kind[r["kind"]][cls] += 1
        if r["maxrss_mb"] > 1024:
            self.big.append({k: r[k] for k in ("path", "kind", "command", "maxrss_mb", "class")})
        if cls in DEFECTS or cls == "backend-panic":
            ex = {k: r[k] for k in ("path", "kind", "detail", "command", "argv", "rc", "wall_s",
                                    "maxrss_mb", "stderr", "leaked")}
            exs = self.examples[cls]
            ex["signature"] = r["signature"]
            # distinct (command, kind, signature); distinct signatures first
            key = (r["command"], r["kind"], r["signature"])
            if all((e["command"], e["kind"], e["signature"]) != key for e in exs):
                sigs = collections.Counter(e["signature"] for e in exs)
                if len(exs) < 5:
                    exs.append(ex)
                elif r["signature"] not in sigs:
                    dup = next(i for i in range(len(exs) - 1, -1, -1) if sigs[exs[i]["signature"]] > 1)
                    exs[dup] = ex
            s = self.sigs[cls].setdefault(r["signature"], {"count": 0, "commands": collections.Counter(),
                                                          "kinds": collections.Counter(), "example": ex})
            s["count"] += 1
            s["commands"][r["command"]] += 1
            s["kinds"][r["kind"]] += 1

    def defect_count(self):
        return sum(c[d] for c in self.counts.values() for d in DEFECTS)

    def to_json(self, wall_total, done):
        return {
            "bin": self.opts.bin, "seed": self.opts.seed, "count": self.ninputs,
            "commands": self.opts.commands, "jobs": self.opts.jobs, "runs_done": self.n,
            "complete": done, "wall_s": round(wall_total, 1),
            "wall_s_per_1000_inputs": round(wall_total * 1000 / max(1, self.ninputs), 1) if done else None,
            "cpu_wall_s_per_command": {k: round(v, 1) for k, v in self.wall.items()},
            "counts": {c: dict(v) for c, v in self.counts.items()},
            "defects_total": self.defect_count(),
            "defects_by_kind": {k: {c: n for c, n in v.items() if c in DEFECTS}
                                for k, v in sorted(self.by_kind.items()) if any(c in DEFECTS for c in v)},
            "examples": dict(self.examples),
            "signatures": {cls: sorted(({"signature": s, "count": v["count"],
                                         "commands": dict(v["commands"]), "kinds": dict(v["kinds"]),
                                         "example_path": v["example"]["path"],
                                         "example_detail": v["example"]["detail"],
                                         "example_stderr": v["example"]["stderr"][:1200]}
                                        for s, v in d.items()), key=lambda x: -x["count"])[:40]
                           for cls, d in self.sigs.items()},
            "rss_over_1GiB": self.big[:100],
        }

    def table(self) -> str:
        cols = [c for c in CLASSES if any(self.counts[k][c] for k in self.counts)] or ["ok"]
        w = max(12, *(len(c) for c in self.counts))
        lines = [f"{'command':<{w}} " + " ".join(f"{c:>{max(6, len(c))}}" for c in cols) + f" {'total':>7}"]
        tot = collections.Counter()
        for cmd, cnt in self.counts.items():
            tot.update(cnt)
            lines.append(f"{cmd:<{w}} " + " ".join(f"{cnt[c]:>{max(6, len(c))}}" for c in cols)
                         + f" {sum(cnt.values()):>7}")
        lines.append(f"{'all':<{w}} " + " ".join(f"{tot[c]:>{max(6, len(c))}}" for c in cols)
                     + f" {sum(tot.values()):>7}")
        for cls in DEFECTS + ["backend-panic"]:
            d = self.sigs.get(cls)
            if not d:
                continue
            lines.append(f"\n{cls}:")
            for s, v in sorted(d.items(), key=lambda x: -x[1]["count"])[:12]:
                cmds = ",".join(f"{k}:{n}" for k, n in v["commands"].most_common(4))
                kinds = ",".join(f"{k}:{n}" for k, n in v["kinds"].most_common(4))
                lines.append(f"  {v['count']:>5}  {s[:150]}\n         commands {cmds}; kinds {kinds}\n"
                             f"         e.g. {v['example']['path']} ({v['example']['detail'][:100]})")
        return "\n".join(lines)
