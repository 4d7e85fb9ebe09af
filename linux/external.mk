include $(sort $(wildcard $(BR2_EXTERNAL_MONET_PATH)/package/*/*.mk))
