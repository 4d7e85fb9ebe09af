#
# This file is part of MONet-open.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The C headers a SoC's code outside the SoC builds against (Linux user space on a board's PS, monet-ctl on a
host through the sim's CSR bridge): LiteX's csr.h, soc.h and mem.h without its bare-metal access functions
(firmware/lib's monet_hal.h brings its own)."""


def write_user_headers(soc, folder):
    """Writes csr.h (addresses, fields), soc.h (constants) and mem.h (memory regions) of `soc` in `folder`."""
    from litex.soc.integration import export
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "soc.h").write_text(export.get_soc_header(soc.constants, with_access_functions=False))
    (folder / "csr.h").write_text(export.get_csr_header(soc.csr_regions, soc.constants,
                                                        csr_base=soc.mem_regions["csr"].origin,
                                                        with_access_functions=False))
    (folder / "mem.h").write_text(export.get_mem_header(soc.mem_regions))
