################################################################################
#
# monet-ctl: firmware/ctl of this repository, built for the target against a
# `monet board build` output's user headers
#
################################################################################

MONET_CTL_VERSION = local
MONET_CTL_SITE = $(BR2_EXTERNAL_MONET_PATH)/../firmware
MONET_CTL_SITE_METHOD = local
MONET_CTL_LICENSE = BSD-2-Clause
MONET_CTL_INCLUDE = $(call qstrip,$(BR2_PACKAGE_MONET_CTL_INCLUDE))

define MONET_CTL_BUILD_CMDS
	test -f $(MONET_CTL_INCLUDE)/generated/csr.h || \
		{ echo "monet-ctl: no $(MONET_CTL_INCLUDE)/generated/csr.h: run monet board build --role compute first"; exit 1; }
	$(TARGET_MAKE_ENV) $(MAKE) -C $(@D)/ctl CC="$(TARGET_CC)" INCLUDE=$(MONET_CTL_INCLUDE) OUT=$(@D)/out
endef

define MONET_CTL_INSTALL_TARGET_CMDS
	$(INSTALL) -D -m 0755 $(@D)/out/monet-ctl $(TARGET_DIR)/usr/bin/monet-ctl
endef

$(eval $(generic-package))
