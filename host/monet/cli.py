"""The `monet` command: build and run the board-free sim, run benchmarks."""

import argparse
import json
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

from monet.benchmarks import AXIS, MEMORY_AXES, REGISTRY, Param, value_text
from monet.link import reliability
from monet.link.profiles import memory_refusal
from monet.model.runner import MODELS
from monet.qemu import QemuError
from monet.report.tables import print_table
from monet.sim.build import BUILDS as SIM_BUILDS, DEFAULT_MODEL, MODELS as SIM_MODELS
from monet.soc.facts import CONSOLE_MAX_SAMPLES


def _log(message):
    print(message, file=sys.stderr, flush=True)


@contextmanager
def _open_target(name, forward_port=False, sim_model=None):
    """The target a benchmark point runs on, opened, and what its results record of it."""
    if name == "host":
        yield None, {}
    elif name == "qemu":
        from monet import qemu
        from monet.loopback import free_port
        image = qemu.GuestImage(log=_log).ensure()
        with qemu.QemuTarget(image, forward_port=free_port() if forward_port else None, log=_log) as guest:
            yield guest, {"image_hash": image.hash, "kernel": image.info["kernel_package"]}
    elif name == "board":
        from monet import qemu
        from monet.board.target import STAND_IN, open_board
        from monet.loopback import free_port
        image = qemu.GuestImage(log=_log).ensure()
        with open_board(image, forward_port=free_port() if forward_port else None, log=_log) as guest:
            yield guest, {"image_hash": image.hash, "kernel": image.info["kernel_package"], "board": STAND_IN,
                          "fpga": guest.fpga, "link_bring_up": guest.link}
    else:
        from monet.sim import SimBuild, SimTarget
        build = SimBuild(sim_model or DEFAULT_MODEL, log=_log).ensure()
        with SimTarget(build) as sim:
            yield sim, {"sim_model": build.model_name, "gateware_hash": build.hash,
                        "firmware_hash": build.firmware_hash}


def bench_point(args):
    """`monet bench NAME`'s point from its options, and why it cannot run (None when it can): everything checked
    before a target is opened or a model built."""
    benchmark = args.benchmark
    point = {"benchmark": benchmark.name, "target": getattr(args, "target", benchmark.targets[0])}
    point.update({name: getattr(args, name, AXIS[name].default) for name in AXIS if name != "target"})
    point.update({p.name: getattr(args, p.name) for p in benchmark.params})
    for p in benchmark.params:
        if p.only_with is None:
            continue
        if not p.applies(point):
            if point.pop(p.name) is not None:
                key, value = p.only_with
                return point, f"{p.flag} applies only with --{key.replace('_', '-')} {value}"
        elif point[p.name] is None:
            point[p.name] = p.default
    refusal = memory_refusal(*(point[k] for k in MEMORY_AXES))
    if refusal:
        return point, refusal
    refusal = benchmark.refuse({p.name: [point[p.name]] for p in benchmark.params if p.name in point},
                               [point["target"]])
    if refusal:
        param = next(p for p in benchmark.params if p.name == refusal[0])
        return point, f"{param.flag} {refusal[1]}"
    return point, benchmark.refuse_point(benchmark.full_point(point))


def cmd_bench(args):
    """`monet bench NAME`: one point of a benchmark of the registry, its result as tables or one JSON line."""
    benchmark = args.benchmark
    point, refusal = bench_point(args)
    if refusal:
        print(f"monet: {refusal}", file=sys.stderr)
        return 2
    t0 = time.time()
    try:
        with _open_target(point["target"], benchmark.forward_port, benchmark.sim_model) as (target, stamp):
            result = benchmark.run(target, point, log=_log)
            if point["target"] == "sim":
                from monet.sim.link_setup import link_counters
                result["link_counters"] = link_counters(target)
    except benchmark.errors as e:
        print(f"monet: {e}", file=sys.stderr)
        return 2
    result.update(stamp, wall_seconds=round(time.time() - t0, 2))
    verdicts = benchmark.verdicts(point, result)
    ok = all(v.passed for v in verdicts if v.gates)
    if args.json:
        print(json.dumps(result))
    else:
        benchmark.show(point, result)
        for v in verdicts:
            print(f"\n{v.text}" + ("" if v.passed is None else f": {'PASS' if v.passed else 'FAIL'}"))
    return 0 if ok else 1


def cmd_link_budget(args):
    rates = [args.rate] if args.rate else sorted(reliability.SENSITIVITY_DBM)
    rows = [reliability.power_budget(rate, tx_dbm=args.tx_dbm, hop_loss_db=args.hop_loss_db, fiber_km=args.fiber_km,
                                     extra_loss_db=args.extra_loss_db, margin_db=args.margin_db,
                                     sensitivity_dbm=args.sensitivity_dbm) for rate in rates]
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"optical power budget: transmitter {args.tx_dbm:g} dBm, {args.hop_loss_db:g} dB per switch hop, "
          f"{args.fiber_km:g} km of fiber, {args.extra_loss_db:g} dB other losses, {args.margin_db:g} dB margin")
    table = [[f"{r['rate_gbps']:g}", f"{r['sensitivity_dbm']:g}", f"{r['budget_db']:.1f}",
              "-" if r["max_hops"] is None else r["max_hops"], "-" if not r["tiers"] else r["tiers"],
              "-" if not r["tiered_hops"] else r["tiered_hops"], r["paper_hops"] or "-"] for r in rows]
    print_table(table, ["Gb/s", "sensitivity dBm", "budget dB", "max hops", "tiers", "hops (2t-1)", "paper"])
    return 0


def cmd_campaign_run(args):
    from monet.campaign.plan import Campaign, CampaignError, plan_models
    try:
        campaign = Campaign(args.file)
        if args.model:      # refused here, before anything is built, where it lacks a point's memory
            plan_models(campaign.points(), args.model)
    except CampaignError as e:
        print(f"monet: {e}", file=sys.stderr)
        return 2
    results = args.results or f"build/campaigns/{campaign.name}"
    points = campaign.points()
    print(f"campaign {campaign.name}: {len(points)} points -> {results}/results.jsonl", file=sys.stderr, flush=True)
    if args.scheduler and args.workers != 1:
        print(f"monet: --workers {args.workers} and --scheduler {args.scheduler!r} exclude each other: give "
              "--workers N for local sims or --scheduler ADDRESS for an existing Dask cluster", file=sys.stderr)
        return 2
    t0 = time.time()
    if args.scheduler or args.workers > 1:
        rc = _campaign_on_workers(campaign, results, args)
    else:
        rc = _campaign_in_pytest(campaign, results, args.model)
    if rc == 0 and args.report:
        rc = _write_report(results, None)
    print(f"campaign {campaign.name}: {'done' if rc == 0 else 'failed'} in {time.time() - t0:.0f} s "
          "(model build included when one was needed)", file=sys.stderr, flush=True)
    return rc


def _campaign_on_workers(campaign, results, args):
    from monet.campaign import workers as campaign_workers
    try:
        with campaign_workers.connect(args.workers, args.scheduler) as client:
            stored, failed = campaign_workers.run_campaign(campaign, results, client, args.model, log=_log)
    except campaign_workers.WorkerError as e:
        print(f"monet: {e}", file=sys.stderr)
        return 2
    print(f"{stored} points stored, {failed} failed", flush=True)
    return 1 if failed else 0


def _campaign_in_pytest(campaign, results, model):
    import monet.campaign.points
    cmd = [sys.executable, "-m", "pytest", monet.campaign.points.__file__, "--campaign", str(campaign.path),
           "--results", results, "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--tb=no", "-rE"]
    cmd += ["--sim-model", model] if model else []
    return subprocess.call(cmd)


def _write_report(results, out):
    from monet.report.document import make_report
    try:
        md, html_path = make_report(results, out)
    except FileNotFoundError as e:
        print(f"monet: {e}", file=sys.stderr)
        return 2
    print(f"report: {md} and {html_path}")
    return 0


def cmd_report(args):
    return _write_report(args.results, args.out)


def cmd_sim_build(args):
    from monet.sim import SimBuild
    build = SimBuild(args.model, log=_log).ensure()
    print(json.dumps({"model": build.model_name, "gateware_hash": build.hash, "dir": str(build.dir),
                      "firmware_hash": build.firmware_hash}))
    return 0


def cmd_sim_speed(args):
    from monet.sim import speed as simspeed
    from monet.sim import SimBuild, SimTarget
    results = []
    for model in SIM_BUILDS if args.model == "all" else [args.model]:
        build = SimBuild(model, log=_log).ensure()
        with SimTarget(build) as target:
            results.append(simspeed.run(target, build))
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else {r["model"]: r for r in results}, indent=1))
    else:
        print("\n\n".join(simspeed.table(r) for r in results))
    return 0


def cmd_sim_serve(args):
    from monet.loopback import port_free
    from monet.sim import ctl
    from monet.sim import SimBuild, SimTarget
    if not port_free(args.port):
        raise ctl.CtlError(f"127.0.0.1:{args.port} is in use: pick another port for litex_server (--port)")
    build = SimBuild(log=_log).ensure()
    binary = ctl.sim_binary(build)
    # A kill (SIGTERM) ends it as Ctrl-C does: the sim and litex_server are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    with SimTarget(build) as target, ctl.LitexServer(target.bridge_port, port=args.port) as server:
        print(f"sim: the SoC's CSRs on 127.0.0.1:{server.port} (litex_server, Etherbone over TCP); for example\n"
              f"  monet ctl --csr {server.spec} help      (monet-ctl: {binary})\n"
              f"  litex_cli --port {server.port} --csr-csv {build.dir / 'csr.csv'} --regs\n"
              "Ctrl-C ends the sim.", flush=True)
        while target.child.isalive() and server.proc.poll() is None:
            time.sleep(1)
    print("sim: the sim or litex_server ended", file=sys.stderr)
    return 1


def cmd_ctl(args):
    from monet.sim import ctl
    return ctl.run_on_served_sim(args.args)


def tcp_port(text):
    """argparse type: a TCP port, 1-65535."""
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (1 to 65535)")
    return port


OVER_GOAL_SHOWN = 12


def over_goal_lines(result):
    """What is left to cut: a line per failing core with its path ends above the goal, deepest first."""
    lines = []
    for core in result["cores"]:
        ends = list(core["over_goal"].items())
        if ends:
            shown = ", ".join(f"{name} {levels}" for name, levels in ends[:OVER_GOAL_SHOWN])
            more = f" and {len(ends) - OVER_GOAL_SHOWN} more" if len(ends) > OVER_GOAL_SHOWN else ""
            lines.append(f"{core['name']}: {len(ends)} path ends above {result['goal_levels']} levels: {shown}{more}")
    return lines


def cmd_board_estimate(args):
    from monet.soc import estimate
    cores = [name for name in args.cores.split(",") if name] if args.cores else None
    try:
        result = estimate.estimate_card(args.card, cores, log=_log)
    except estimate.EstimateError as e:
        print(f"monet: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"{args.card} card, {result['part']} ({result['yosys']}, {result['synthesis']}); "
              f"logic levels: LUTs, MUXFs and CARRY8s between registers, goal <= {result['goal_levels']} at 250 MHz")
        print_table(estimate.table_rows(result), estimate.TABLE_HEADERS)
        for line in over_goal_lines(result):
            print(line)
        print("PASS" if result["pass"] else "FAIL: " + ", ".join(
            c["name"] for c in result["cores"] if not c["meets_goal"]) + f" above {result['goal_levels']} levels")
    return 0 if result["pass"] else 1


def cmd_board_build(args):
    from monet.board.build import BoardError, build_card
    try:
        build_card(args.board, args.role, args.lanes, args.rate, args.cage, args.ps_preset, args.out,
                   compile_gateware=args.build, load=args.load, delay_line=args.delay_line, log=_log)
    except BoardError as e:
        print(f"monet: {e}", file=sys.stderr)
        return 2
    return 0


def cmd_model(args):
    from monet.model import ModelInputError, runner
    try:
        config, text = runner.load_input(args.input)
        records = runner.load_records(args.from_results) if args.from_results else None
        result = runner.run(args.model, config, records=records, progress=runner.ProgressLine(args.model))
    except ModelInputError as e:
        print(f"monet: {e}", file=sys.stderr)
        return 2
    results = args.results or f"build/models/{args.model}"
    path = runner.store(results, args.model, result, args.input, text, args.from_results)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        runner.print_summary(args.model, result)
    if args.from_results and result.get("measured_from_results") == {}:
        print(f"monet: --from {args.from_results}: the input set no key to 'measured', so nothing was taken from it "
              "(doc/models.md lists the keys that take one)", file=sys.stderr)
    print(f"model {args.model}: {result['wall_s']:.1f} s, stored in {path}", file=sys.stderr)
    return _write_report(results, None) if args.report else 0


def cmd_demo(args):
    from monet.demo import run_demo
    return run_demo(args.out, samples=args.samples)


def _add_option(parser, param, default=None, required=False):
    text = param.help + ("" if default is None or required else f" (default {value_text(default)})") + \
        f"; accepted: {param.accepted}"
    parser.add_argument(param.flag, dest=param.name, type=param.parse, default=default, required=required,
                        metavar=param.flag.lstrip("-").upper().replace("-", "_"),
                        help=text.replace("%", "%%"))   # argparse formats help with %: "53 %" is text here


def _add_benchmark(bench_parsers, benchmark):
    """`monet bench NAME`'s options from the benchmark's declaration: its target when it has several, the
    axes it takes and its parameters."""
    parser = bench_parsers.add_parser(benchmark.name, help=benchmark.help, description=benchmark.help)
    if len(benchmark.targets) > 1:
        _add_option(parser, Param("target", "where it runs", choices=benchmark.targets),
                    default=benchmark.targets[0])
    for name in benchmark.axes:
        _add_option(parser, AXIS[name], default=benchmark.axis_defaults.get(name, AXIS[name].default))
    for param in benchmark.params:
        _add_option(parser, param, default=param.default, required=param.required)
        if param.only_with:     # given or not: an option given where it does not apply is refused
            parser.set_defaults(**{param.name: None})
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=cmd_bench, benchmark=benchmark)


# Options of `monet link budget` and `monet campaign run`.
BUDGET = {
    "rate": Param("rate", "one lane rate (default: all with a known sensitivity)",
                  choices=tuple(sorted(reliability.SENSITIVITY_DBM))),
    "tx_dbm": Param("tx_dbm", "transmitter power, dBm", low=-30, high=10, default=-3.0, flag="--tx-dbm"),
    "hop_loss_db": Param("hop_loss_db", "insertion loss per switch hop, dB", low=0.01, high=20, default=1.0,
                         flag="--hop-loss-db"),
    "fiber_km": Param("fiber_km", "fiber length, km", low=0, high=100, default=0.0, flag="--fiber-km"),
    "extra_loss_db": Param("extra_loss_db", "connectors, splices and patch cords on the path, dB", low=0, high=30,
                           default=0.0, flag="--extra-loss-db"),
    "margin_db": Param("margin_db", "system margin, dB", low=0, high=30, default=0.0, flag="--margin-db"),
    "sensitivity_dbm": Param("sensitivity_dbm", "receiver sensitivity for the target BER (default: the paper's, "
                             "per rate)", low=-40, high=10, flag="--sensitivity-dbm"),
}
DEMO_SAMPLES = Param("samples", "accesses per point", low=1, high=CONSOLE_MAX_SAMPLES, integer=True, default=200)
WORKERS = Param("workers", "run points on N local sims at once (a Dask LocalCluster on loopback)", low=1, high=64,
                integer=True, default=1)


def make_parser():
    parser = argparse.ArgumentParser(prog="monet", description="MONet-open: remote memory over serial links, "
                                     "board-free on a cycle-accurate LiteX sim.")
    sub = parser.add_subparsers(dest="command", required=True)

    bench = sub.add_parser("bench", help="run one benchmark").add_subparsers(dest="bench", required=True)
    for benchmark in REGISTRY.values():
        _add_benchmark(bench, benchmark)

    link = sub.add_parser("link", help="link planning").add_subparsers(dest="link", required=True)
    lb = link.add_parser("budget", help="optical power budget: the largest switch-hop count per lane rate")
    for param in BUDGET.values():
        _add_option(lb, param, default=param.default)
    lb.add_argument("--json", action="store_true")
    lb.set_defaults(func=cmd_link_budget)

    camp = sub.add_parser("campaign", help="sweeps from a YAML file").add_subparsers(dest="campaign", required=True)
    cr = camp.add_parser("run", help="run a campaign's points as pytest items; finished points are kept")
    cr.add_argument("file", help="campaign YAML file")
    cr.add_argument("--results", default=None, help="results folder (default build/campaigns/NAME)")
    cr.add_argument("--report", action="store_true", help="write the report when every point is done")
    _add_option(cr, WORKERS, default=WORKERS.default)
    cr.add_argument("--scheduler", default=None, metavar="ADDRESS",
                    help="send points to an existing Dask cluster, e.g. tcp://head-node:8786")
    cr.add_argument("--model", choices=SIM_MODELS, default=None,
                    help="run every sim point on this sim model (default: the smallest that holds a point's memory "
                         "where its points run long enough to repay a build, else one the campaign uses or full)")
    cr.set_defaults(func=cmd_campaign_run)

    rep = sub.add_parser("report", help="Markdown + HTML report with plots of a results folder")
    rep.add_argument("results", help="results folder (holding results.jsonl)")
    rep.add_argument("--out", default=None, help="output folder (default: the results folder)")
    rep.set_defaults(func=cmd_report)

    sim = sub.add_parser("sim", help="the sim model").add_subparsers(dest="sim", required=True)
    model_help = ("the sim model, by the memories its card holds besides SRAM: sram (none), ddr4, hmc, full (both; "
                  "the default); pooled: ddr4's and three traffic cards on the memory card's ports")
    sb = sim.add_parser("build", help="build (or reuse) a Verilator model and the firmware")
    sb.add_argument("--model", choices=SIM_BUILDS, default=DEFAULT_MODEL, help=model_help)
    sb.set_defaults(func=cmd_sim_build)
    ss = sim.add_parser("speed", help="cycles/s of a model on three fixed workloads (idle, CPU remote, PBB busy)")
    ss.add_argument("--model", choices=[*SIM_BUILDS, "all"], default=DEFAULT_MODEL,
                    help=model_help + "; all: each model in turn")
    ss.add_argument("--json", action="store_true")
    ss.set_defaults(func=cmd_sim_speed)
    sv = sim.add_parser("serve", help="run the sim with its CSRs served on 127.0.0.1 (litex_server): for monet-ctl, "
                        "litex_cli, RemoteClient; until Ctrl-C")
    sv.add_argument("--port", type=tcp_port, default=1234, help="litex_server's port (default 1234, LiteX's)")
    sv.set_defaults(func=cmd_sim_serve)

    # Everything after `ctl` is monet-ctl's own (its --csr, --help, a command and key=value pairs).
    ctl = sub.add_parser("ctl", help="monet-ctl on the served sim (`monet sim serve`): monet ctl [--csr SPEC] "
                         "[COMMAND [key=value ...]]; `monet ctl help` lists the commands", add_help=False,
                         prefix_chars="\0")
    ctl.add_argument("args", nargs=argparse.REMAINDER)
    ctl.set_defaults(func=cmd_ctl)

    board = sub.add_parser("board", help="the board targets").add_subparsers(dest="board", required=True)
    be = board.add_parser("estimate", help="Yosys resources and logic depth of a card's cores (UltraScale+), "
                          "against the goal of 8 levels at 250 MHz; exit 1 when a core is deeper")
    be.add_argument("--card", choices=("compute", "memory", "pooled"), default="compute",
                    help="the card (default compute; pooled: the memory card core behind its ports)")
    be.add_argument("--cores", default=None, metavar="NAME,...", help="only these cores (default: all the card's); "
                    "core.part for one part of a core alone, e.g. link.deframer")
    be.add_argument("--json", action="store_true", help="print one JSON object")
    be.set_defaults(func=cmd_board_estimate)
    bb = board.add_parser("build", help="a card's design for a board: Verilog, Vivado TCL, XDC, the CSR map and "
                          "C headers (--no-compile, the default, needs no Vivado); --build and --load need Vivado")
    from monet.board.build import add_build_arguments
    add_build_arguments(bb)
    bb.set_defaults(func=cmd_board_build)

    model = sub.add_parser("model", help="system models fed with measured figures: the switch-plane topology, "
                           "power and energy per bit, the FMU message buffer")
    model.add_argument("model", choices=MODELS, help="which model")
    model.add_argument("input", nargs="?", default=None, help="the model's YAML input (default: the paper's "
                       "parameters); its keys are in the README's \"Models\" section")
    model.add_argument("--from", dest="from_results", default=None, metavar="RESULTS",
                       help="take measured latency and bandwidth from a campaign's results folder")
    model.add_argument("--results", default=None, help="where the result is stored (default build/models/MODEL)")
    model.add_argument("--report", action="store_true", help="write the report (Markdown, HTML, plots) there too")
    model.add_argument("--json", action="store_true", help="print the whole result as JSON")
    model.set_defaults(func=cmd_model)

    demo = sub.add_parser("demo", help="latency over distance at 8 x 15 Gb/s, table under build/")
    demo.add_argument("--out", default="build/demo", help="output folder (default build/demo)")
    _add_option(demo, DEMO_SAMPLES, default=DEMO_SAMPLES.default)
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv=None):
    parser = make_parser()
    args = parser.parse_args(argv)
    from monet.sim import SimError
    from monet.sim.ctl import CtlError
    try:
        return args.func(args)
    except (SimError, QemuError, CtlError) as e:
        print(f"monet: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("monet: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
