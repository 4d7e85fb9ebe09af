################################################################################
#
# monet-stream: bench/stream of this repository, built for the target
#
################################################################################

MONET_STREAM_VERSION = local
MONET_STREAM_SITE = $(BR2_EXTERNAL_MONET_PATH)/../bench/stream
MONET_STREAM_SITE_METHOD = local
MONET_STREAM_LICENSE = BSD-2-Clause

define MONET_STREAM_BUILD_CMDS
	$(TARGET_MAKE_ENV) $(MAKE) -C $(@D) CC="$(TARGET_CC)" CROSS= CFLAGS="$(TARGET_CFLAGS) -O2" O=$(@D)/out
endef

define MONET_STREAM_INSTALL_TARGET_CMDS
	$(INSTALL) -D -m 0755 $(@D)/out/stream $(TARGET_DIR)/usr/bin/stream
endef

$(eval $(generic-package))
