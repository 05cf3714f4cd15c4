package enum SessionBridgeModule {}
