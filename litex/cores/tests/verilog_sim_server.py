"""The simulator side of `verilog_sim`: a cocotb test that lends the Verilated core to the pytest process.

It connects to the Unix socket named by MONET_HARNESS_SOCKET and serves three requests, each a pickled
tuple: ("read", names) answers the values now; ("step", writes, names) waits for the next rising edge of
`sys_clk`, applies the writes just after it (so the edge sampled the old values, as in Migen's simulator),
waits for the falling edge and answers the settled values of `names`; ("done",) ends the test.
"""

import os
import socket

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge, Timer

from monet.cores.tests.verilog_sim_wire import receive, send


@cocotb.test()
async def serve(dut):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(os.environ["MONET_HARNESS_SOCKET"])
    handles = {}

    def handle(name):
        if name not in handles:
            handles[name] = dut._id(name, extended=False)
        return handles[name]

    def read(names):
        values = []
        for name in names:
            value = handle(name).value
            values.append(value.to_unsigned() if hasattr(value, "to_unsigned") else int(value))
        return values

    clk = dut.sys_clk
    Clock(clk, 10, unit="ns").start(start_high=False)
    dut.sys_rst.value = 0
    await Timer(1, "ns")
    while True:
        request = receive(sock)
        if request is None or request[0] == "done":
            break
        if request[0] == "read":
            send(sock, read(request[1]))
        else:
            _, writes, names = request
            await RisingEdge(clk)
            for name, value in writes:
                handle(name).value = value
            await FallingEdge(clk)
            send(sock, read(names))
    sock.close()
