#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The report of tools/bench.sh: results.md, results.csv and interrupts.png
from results.raw, the "BENCH key=value ..." lines of every boot (values
percent-encoded), annotated by bench.sh with arch=, kernel= (base, off, on)
and boot=.  --self-test checks it on fabricated lines."""

import argparse
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

KERNELS = {"base": "(a) base 6.12", "off": "series, option off", "on": "(b) series"}

COST_TARGETS = {
    "getppid_housekeeping": ("on/off <= 1.01", "le1pct"),
    "ipi_call_function": ("no measurable change vs base", "noise"),
    "ipi_wakeup_idle": ("no measurable change vs base", "noise"),
    "ipi_resched_busy": ("no measurable change vs base", "noise"),
}


def parse(lines):
    recs = []
    for line in lines:
        line = line.strip()
        if not line.startswith("BENCH "):
            continue
        rec = {}
        for tok in line.split()[1:]:
            if "=" not in tok:
                continue
            k, v = tok.split("=", 1)
            rec[k] = urllib.parse.unquote(v)
        recs.append(rec)
    return recs


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def fmt(v, digits=0):
    if v is None:
        return "n/a"
    if digits == 0 and float(v).is_integer():
        return "%d" % v
    return "%.*f" % (digits or 2, v)


def ratio(a, b):
    """(b)/(a) as text; n/a stays n/a."""
    if a is None or b is None:
        return "n/a"
    if a == 0:
        return "0/0" if b == 0 else "inf"
    return "%.2f" % (b / a)


class Report:
    def __init__(self, recs):
        self.meta = {}
        self.versions = {}
        self.info = {}
        self.boots = []
        self.quality = {}  # (arch, row) -> {kernel: rec}
        self.cost = {}
        self.scale = {}
        self.order = {"quality": [], "cost": [], "scale": []}
        for r in recs:
            part = r.get("part")
            key = (r.get("arch", "?"), r.get("row", "?"))
            if part == "meta":
                self.meta.update(r)
            elif part == "version":
                self.versions[(r.get("arch"), r.get("kernel"))] = r
            elif part == "info":
                self.info[(r.get("arch"), r.get("kernel"), r.get("boot"))] = r
            elif part == "boot":
                self.boots.append(r)
            elif part in ("quality", "cost", "scale"):
                table = getattr(self, part)
                if key not in table:
                    self.order[part].append(key)
                table.setdefault(key, {})[r.get("kernel", "?")] = r
        self.arches = sorted({k[0] for p in self.order.values() for k in p} |
                             {k[0] for k in self.versions})
        self.csv_rows = []
        self.summary = {"pass": 0, "short": 0, "na": 0}

    # -- helpers --------------------------------------------------------
    @staticmethod
    def na(rec):
        if rec is None:
            return "not run"
        if rec.get("status") == "na":
            return "n/a (%s)" % rec.get("reason", "?")
        if rec.get("status") != "ok":
            return "error"
        return None

    def csv_add(self, part, arch, row, metric, unit, vals, ratio_txt="", verdict=""):
        self.csv_rows.append([part, arch, row, metric, unit,
                              vals.get("base", ""), vals.get("off", ""),
                              vals.get("on", ""), ratio_txt, verdict])

    # -- part 1 ---------------------------------------------------------
    def quality_table(self, arch, out):
        rows = [k for k in self.order["quality"] if k[0] == arch]
        if not rows:
            return
        out.append("### %s\n" % arch)
        out.append("| disturber | expected on (b) | (a) irq | (a) softirq | (b) irq | "
                   "(b) softirq | ratio irq (b)/(a) | (b) losses | (b) reported cause | "
                   "verdict | (a) irq types | (b) irq types |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for key in rows:
            by = self.quality[key]
            a, b = by.get("base"), by.get("on")
            ref = b or a
            exp = ref.get("expect", "?")
            expect = ("1 loss, cause ~ `%s`" % ref.get("expect_cause")
                      if exp == "loss" else "0 interrupts, 0 losses")
            cells = {}
            for k, r in (("base", a), ("on", b)):
                why = self.na(r)
                cells[k] = {
                    "irq": why or fmt(num(r.get("irq"))),
                    "soft": why or fmt(num(r.get("softirq"))),
                    "types": why or r.get("irq_types", "-"),
                    "n_irq": None if why else num(r.get("irq")),
                }
            lost, cause, verdict = "n/a", "n/a", "n/a"
            why_b = self.na(b)
            if why_b:
                verdict = why_b
                self.summary["na"] += 1
            elif b.get("isolated") != "1":
                lost = cause = "not isolated (%s)" % b.get("prctl", "?")
                verdict = "short (not isolated)"
                self.summary["short"] += 1
            else:
                lost = b.get("lost", "?")
                cause = b.get("cause", "-")
                verdict = b.get("verdict", "?")
                self.summary["pass" if verdict == "pass" else "short"] += 1
            rt = ratio(cells["base"]["n_irq"], cells["on"]["n_irq"])
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                key[1], expect, cells["base"]["irq"], cells["base"]["soft"],
                cells["on"]["irq"], cells["on"]["soft"], rt, lost,
                cause.replace("|", "\\|"), verdict, cells["base"]["types"],
                cells["on"]["types"]))
            for metric, field in (("irq", "irq"), ("softirq", "soft"), ("irq_types", "types")):
                self.csv_add("quality", arch, key[1], metric, "count",
                             {"base": cells["base"][field], "on": cells["on"][field]},
                             rt if metric == "irq" else "", verdict)
            self.csv_add("quality", arch, key[1], "losses", "count", {"on": lost}, "", verdict)
            self.csv_add("quality", arch, key[1], "cause", "text", {"on": cause}, "", verdict)
        out.append("")

    # -- part 2 ---------------------------------------------------------
    def cost_table(self, arch, out):
        rows = [k for k in self.order["cost"] if k[0] == arch]
        if not rows:
            return
        out.append("### %s\n" % arch)
        out.append("| path | CPU | (a) base | series, option off | (b) series, option on | "
                   "(b)/(a) | on/off | target | verdict |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for key in rows:
            by = self.cost[key]
            med, spread, cells = {}, {}, {}
            cpu = "?"
            for k in ("base", "off", "on"):
                r = by.get(k)
                why = self.na(r)
                if why:
                    cells[k] = why
                    med[k] = None
                    continue
                cpu = r.get("cpu", cpu)
                m, lo, hi = num(r.get("med")), num(r.get("min")), num(r.get("max"))
                med[k] = m
                spread[k] = (hi - lo) / m if m else 0
                cells[k] = "%.1f [%.1f-%.1f]" % (m, lo, hi)
                if r.get("eagain") not in (None, "0"):
                    cells[k] += ", %s EAGAIN" % r["eagain"]
            r_ba = ratio(med["base"], med["on"])
            r_onoff = ratio(med["off"], med["on"])
            target, kind = COST_TARGETS.get(key[1], ("-", None))
            verdict = "-"
            if kind == "le1pct":
                verdict = ("n/a" if r_onoff in ("n/a", "0/0", "inf") else
                           "pass" if med["on"] <= med["off"] * 1.01 else "short")
            elif kind == "noise":
                if med["base"] is None or med["on"] is None:
                    verdict = "n/a"
                else:
                    noise = max(spread.get("base", 0), spread.get("on", 0), 0.001)
                    change = abs(med["on"] / med["base"] - 1)
                    verdict = "pass" if change <= noise else "short (%+.2f%%, noise %.2f%%)" % (
                        100 * (med["on"] / med["base"] - 1), 100 * noise)
            if verdict.startswith("pass"):
                self.summary["pass"] += 1
            elif verdict.startswith("short"):
                self.summary["short"] += 1
            what = (by.get("on") or by.get("base") or by.get("off") or {}).get("what", "")
            out.append("| %s<br>%s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                key[1], what, cpu, cells["base"], cells["off"], cells["on"],
                r_ba, r_onoff, target, verdict))
            self.csv_add("cost", arch, key[1], "insns_median", "instructions",
                         {k: fmt(med[k], 2) for k in med}, r_ba, verdict)
        out.append("")

    # -- part 3 ---------------------------------------------------------
    def scale_table(self, arch, out):
        rows = [k for k in self.order["scale"] if k[0] == arch]
        if not rows:
            return
        out.append("### %s\n" % arch)
        out.append("| isolated CPUs entering at once | (a) base | (b) series: ms, median [min-max] "
                   "| (b) EAGAIN retries (median) |")
        out.append("|---|---|---|---|")
        for key in rows:
            by = self.scale[key]
            cells = {}
            for k in ("base", "on"):
                r = by.get(k)
                why = self.na(r)
                cells[k] = why or "%s [%s-%s]" % (r.get("med"), r.get("min"), r.get("max"))
            b = by.get("on")
            eag = b.get("eagain_med", "n/a") if b and not self.na(b) else "n/a"
            out.append("| %s (CPUs %s) | %s | %s | %s |" % (
                key[1], (b or {}).get("cpus", "?"), cells["base"], cells["on"], eag))
            self.csv_add("scale", arch, key[1], "enter_ms_median", "ms (guest time)",
                         {"base": cells["base"], "on": cells["on"]})
        out.append("")

    # -- whole report -----------------------------------------------------
    def markdown(self):
        m = self.meta
        out = ["# Task isolation benchmark", ""]
        out.append("Run %s, %s mode (%s s window per part 1 row), %s s in all. "
                   "Architectures run: **%s**%s." % (
                       m.get("date", "?"), "quick" if m.get("quick") == "1" else "full",
                       m.get("window_s", "?"), m.get("duration_s", "?"),
                       m.get("arches", "?").strip() or "none",
                       "; not run: %s" % m["not_run"].strip() if m.get("not_run", "").strip()
                       else ""))
        out.append("")
        out.append("- QEMU: %s (TCG; part 2 and 3 with `-icount shift=0,sleep=off`: "
                   "1 guest ns = 1 instruction); host CPUs: %s" % (
                       m.get("qemu", "?"), m.get("host_cpus", "?")))
        out.append("- Isolated CPUs: %s; CPU 0 does housekeeping and runs the disturbers."
                   % m.get("isolated", "?"))
        out.append("")
        out.append("| arch | kernel | source | config sha256 | release (guest) | command line |")
        out.append("|---|---|---|---|---|---|")
        for (arch, k), v in sorted(self.versions.items()):
            info = next((i for (a, kk, _), i in self.info.items() if a == arch and kk == k), {})
            out.append("| %s | %s | %s (%s) | %s | %s | `%s` |" % (
                arch, KERNELS.get(k, k), v.get("src", "?"), v.get("branch", "?"),
                v.get("config_sha256", "?"), info.get("uname", "not booted"),
                info.get("cmdline", "-")))
        bad = [b for b in self.boots if b.get("verdict") != "ok" or b.get("reports", "-") != "-"]
        if bad:
            out.append("")
            out.append("Boot problems:")
            for b in bad:
                out.append("- %s %s part %s: %s %s" % (
                    b.get("arch"), b.get("kernel"), b.get("boot"), b.get("verdict"),
                    b.get("reports", "")))
        out.append("")
        out.append("## 1. Isolation quality: interrupts on the isolated CPU during the window")
        out.append("")
        out.append("Deltas of the isolated CPU's `/proc/interrupts` and `/proc/softirqs` "
                   "columns, read on CPU 0. (a) spins as a plain nohz_full task; (b) inside "
                   "task isolation with SIGUSR1 caught. Losses = signals received; cause = "
                   "first `task_isolation_lost` trace event. The task woken onto the CPU is "
                   "expected to end isolation by design (a second runnable task needs the "
                   "CPU); arm64 invalidates TLBs by broadcast, so munmap/mprotect expect no "
                   "interrupt there. Ratio 0/0: none on either kernel.")
        out.append("")
        for arch in self.arches:
            self.quality_table(arch, out)
        out.append("## 2. Cost: guest instructions per operation (median [min-max] of the repetitions)")
        out.append("")
        out.append("No task is isolated except in `isolation_enter_leave`.  The IPI rows run before "
                   "any task of the boot asked for isolation, except `ipi_call_function_used`, "
                   "which runs right after `isolation_enter_leave` (the series attaches its IPI sender "
                   "probes on a request and detaches them 10 s after the last one). \"No measurable change\" "
                   "means |(b)/(a) - 1| within the larger relative spread (max-min)/median of "
                   "the two kernels' repetitions (at least 0.1 %).")
        out.append("")
        for arch in self.arches:
            self.cost_table(arch, out)
        out.append("## 3. Scale: time to enter isolation (guest time under -icount, EAGAIN retries "
                   "sleep 1 ms)")
        out.append("")
        for arch in self.arches:
            self.scale_table(arch, out)
        s = self.summary
        out.append("**Targets: %d met, %d short, %d n/a.**" % (s["pass"], s["short"], s["na"]))
        out.append("")
        return "\n".join(out)

    def csv_text(self):
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["part", "arch", "row", "metric", "unit", "base", "series_off",
                    "series", "ratio_b_a", "verdict"])
        w.writerows(self.csv_rows)
        return buf.getvalue()

    def chart(self, outdir):
        """interrupts.png: interrupts per disturber, (a) and (b), log scale."""
        gp = shutil.which("gnuplot")
        rows = self.order["quality"]
        if not gp or not rows:
            return "no gnuplot" if not gp else "no part 1 results"
        dat = os.path.join(outdir, "interrupts.dat")
        with open(dat, "w") as f:
            f.write("# disturber base series (n/a = ?)\n")
            for key in rows:
                vals = []
                for k in ("base", "on"):
                    r = self.quality[key].get(k)
                    vals.append("?" if self.na(r) else "%d" % (num(r.get("irq")) + 1))
                label = key[1] if len(self.arches) == 1 else "%s:%s" % key
                f.write('"%s" %s %s\n' % (label, vals[0], vals[1]))
        png = os.path.join(outdir, "interrupts.png")
        script = """
set terminal pngcairo noenhanced size 1200,600 font ",10"
set output '%s'
set title "Interrupts on the isolated CPU per disturber (%s s window; no bar: n/a)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set datafile missing "?"
set logscale y
set yrange [0.8:*]
set ylabel "interrupts + 1 (log scale)"
set xtics rotate by -40 nomirror
set key top left
plot '%s' using 2:xtic(1) title "(a) base 6.12", '' using 3 title "(b) series, isolated"
""" % (png, self.meta.get("window_s", "?"), dat)
        res = subprocess.run([gp], input=script, text=True, capture_output=True)
        if res.returncode:
            return "gnuplot failed: " + res.stderr.strip()[:200]
        return None


def write(raw, outdir):
    with open(raw, errors="replace") as f:
        rep = Report(parse(f))
    md = rep.markdown()
    err = rep.chart(outdir)
    if err:
        md += "\nChart: not written (%s).\n" % err
    else:
        md += "\n![interrupts per disturber](interrupts.png)\n"
    with open(os.path.join(outdir, "results.md"), "w") as f:
        f.write(md)
    with open(os.path.join(outdir, "results.csv"), "w") as f:
        f.write(rep.csv_text())
    return rep


SAMPLE = """\
BENCH part=meta date=2026-01-01T00%3A00%3A00Z quick=1 window_s=10 arches=x86_64 not_run=arm64%20 qemu=QEMU%20emulator%20version%207.2.22 host_cpus=2 isolated=1-3
BENCH part=version arch=x86_64 kernel=base src=aaaaaaaaaaaa branch=base config_sha256=1111
BENCH part=version arch=x86_64 kernel=off src=bbbbbbbbbbbb branch=tip config_sha256=2222
BENCH part=version arch=x86_64 kernel=on src=bbbbbbbbbbbb branch=tip config_sha256=3333
BENCH arch=x86_64 kernel=base boot=quality part=info uname=6.12.118-ti cmdline=root%3D/dev/vda%20nohz_full%3D1-3
BENCH arch=x86_64 kernel=base boot=quality part=quality row=idle expect=zero expect_cause=- own_mm=0 status=ok window_s=10 irq=0 softirq=0 irq_types=- isolated=0 prctl=Invalid%20argument lost=-1 cause=- verdict=- iters=40
BENCH arch=x86_64 kernel=on boot=quality part=quality row=idle expect=zero expect_cause=- own_mm=0 status=ok window_s=10 irq=0 softirq=0 irq_types=- isolated=1 eagain=3 lost=0 reports=0 cause=- verdict=pass iters=40
BENCH arch=x86_64 kernel=base boot=quality part=quality row=munmap expect=loss expect_cause=TLB%20flush own_mm=1 status=ok irq=40 softirq=0 irq_types=TLB%3D40 isolated=0 lost=-1 cause=- verdict=- iters=40
BENCH arch=x86_64 kernel=on boot=quality part=quality row=munmap expect=loss expect_cause=TLB%20flush own_mm=1 status=ok irq=20 softirq=0 irq_types=TLB%3D20 isolated=1 lost=1 reports=1 cause=TLB%20flush verdict=pass iters=40
BENCH arch=x86_64 kernel=base boot=quality part=quality row=static_key expect=zero expect_cause=- own_mm=0 status=na reason=config iters=0
BENCH arch=x86_64 kernel=on boot=quality part=quality row=static_key expect=zero expect_cause=- own_mm=0 status=na reason=config iters=0
BENCH arch=x86_64 kernel=base boot=quality part=quality row=bpf_jit_load expect=zero expect_cause=- own_mm=0 status=ok irq=48 softirq=2 irq_types=CAL%3D48 isolated=0 lost=-1 cause=- verdict=- iters=40
BENCH arch=x86_64 kernel=on boot=quality part=quality row=bpf_jit_load expect=zero expect_cause=- own_mm=0 status=ok irq=24 softirq=0 irq_types=CAL%3D24 isolated=1 lost=1 reports=1 cause=IPI%20do_sync_core verdict=short iters=40
BENCH arch=x86_64 kernel=base boot=cost part=cost row=getppid_housekeeping what=getppid cpu=0 n=20000 reps=5 min=428.00 med=428.10 max=428.40 status=ok
BENCH arch=x86_64 kernel=off boot=cost part=cost row=getppid_housekeeping what=getppid cpu=0 n=20000 reps=5 min=430.00 med=430.00 max=430.20 status=ok
BENCH arch=x86_64 kernel=on boot=cost part=cost row=getppid_housekeeping what=getppid cpu=0 n=20000 reps=5 min=433.00 med=433.00 max=433.10 status=ok
BENCH arch=x86_64 kernel=base boot=cost part=cost row=ipi_call_function what=membarrier cpu=0 n=2001 reps=5 min=5000 med=5000 max=5005 status=ok
BENCH arch=x86_64 kernel=off boot=cost part=cost row=ipi_call_function what=membarrier cpu=0 n=2001 reps=5 min=5000 med=5001 max=5004 status=ok
BENCH arch=x86_64 kernel=on boot=cost part=cost row=ipi_call_function what=membarrier cpu=0 n=2001 reps=5 min=5100 med=5100 max=5102 status=ok
BENCH arch=x86_64 kernel=base boot=cost part=cost row=isolation_enter_leave status=na reason=kernel
BENCH arch=x86_64 kernel=off boot=cost part=cost row=isolation_enter_leave status=na reason=kernel
BENCH arch=x86_64 kernel=on boot=cost part=cost row=isolation_enter_leave what=cycle cpu=1 n=1001 reps=5 min=9000 med=9100 max=9300 eagain=0 status=ok
BENCH arch=x86_64 kernel=base boot=cost part=scale row=enter_1_cpu status=na reason=kernel
BENCH arch=x86_64 kernel=on boot=cost part=scale row=enter_1_cpu cpus=1 reps=5 min=1.000 med=2.000 max=3.000 eagain_med=1 status=ok
BENCH part=boot arch=x86_64 kernel=on boot=quality verdict=ok reports=-
BENCH part=meta duration_s=900
"""


def self_test():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "results.raw")
        with open(raw, "w") as f:
            f.write(SAMPLE)
        rep = write(raw, d)
        md = open(os.path.join(d, "results.md")).read()
        rows = list(csv.reader(open(os.path.join(d, "results.csv"))))
        by = {(r[0], r[2], r[3]): r for r in rows[1:]}
        check(rows[0][8] == "ratio_b_a", "CSV has a ratio column")
        check(by[("quality", "munmap", "irq")][8] == "0.50", "munmap irq ratio 20/40 = 0.50")
        check(by[("quality", "idle", "irq")][8] == "0/0", "idle irq ratio 0/0")
        check(by[("quality", "bpf_jit_load", "irq")][8] == "0.50", "bpf ratio 24/48")
        sk = by[("quality", "static_key", "irq")]
        check(sk[5] == "n/a (config)" and sk[7] == "n/a (config)" and sk[8] == "n/a",
              "n/a (config) rows stay n/a in the CSV: %s" % sk)
        check(sk[9] == "n/a (config)", "n/a row's verdict is n/a (config)")
        check("| static_key |" in md and "n/a (config) | n/a (config)" in md,
              "n/a (config) rows stay n/a in the table")
        check(by[("quality", "munmap", "irq")][9] == "pass", "munmap: one loss, right cause: pass")
        check(by[("quality", "bpf_jit_load", "irq")][9] == "short", "bpf: interrupts: short")
        g = by[("cost", "getppid_housekeeping", "insns_median")]
        check(g[8] == "1.01" and g[9] == "pass", "getppid: 433/430 within 1 %%: %s" % g)
        c = by[("cost", "ipi_call_function", "insns_median")]
        check(c[8] == "1.02" and c[9].startswith("short"), "IPI +2 %% is measurable: %s" % c)
        e = by[("cost", "isolation_enter_leave", "insns_median")]
        check(e[5] == "n/a" and e[7] == "9100.00", "enter+leave n/a on base: %s" % e)
        check("not run: arm64" in md, "the header says which arch did not run")
        check("QEMU emulator version 7.2.22" in md and "1111" in md, "versions in the header")
        check(rep.summary == {"pass": 3, "short": 2, "na": 1}, "summary %s" % rep.summary)
        if shutil.which("gnuplot"):
            png = os.path.join(d, "interrupts.png")
            check(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n",
                  "interrupts.png is a PNG")
    print("bench-report self-test: %d check(s) failed" % len(failures) if failures
          else "bench-report self-test: all checks passed")
    for f in failures:
        print("  FAILED: " + f)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--raw", help="results.raw of a bench run")
    ap.add_argument("--outdir", help="where to write results.md, results.csv, interrupts.png")
    ap.add_argument("--self-test", action="store_true",
                    help="check the generator on fabricated results")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not args.raw or not args.outdir:
        ap.print_usage(sys.stderr)
        return 2
    write(args.raw, args.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
