# What the firmware (firmware/app) and monet-ctl (firmware/ctl) both build: the console's CSR commands
# (firmware/console) and the drivers (firmware/lib). The including Makefile sets SRC_DIR (its own folder), OUT
# and GENERATED_HEADERS (the SoC's headers its objects depend on, or none) first; CC and CFLAGS by the time
# it builds.
CONSOLE_DIR := $(abspath $(SRC_DIR)/../console)
LIB_DIR     := $(abspath $(SRC_DIR)/../lib)
CONSOLE     := console cmd_link cmd_remat cmd_pbb cmd_memcard cmd_hmc cmd_stages cmd_pool
DRIVERS     := remat combiner link channel memcard hmc pbb stages card pool switch
SHARED_HEADERS := $(wildcard $(LIB_DIR)/*.h $(CONSOLE_DIR)/*.h)

$(OUT)/%.o: $(CONSOLE_DIR)/%.c $(SHARED_HEADERS) $(GENERATED_HEADERS)
	$(CC) -c $(CFLAGS) $< -o $@
$(OUT)/%.o: $(LIB_DIR)/%.c $(SHARED_HEADERS) $(GENERATED_HEADERS)
	$(CC) -c $(CFLAGS) $< -o $@
