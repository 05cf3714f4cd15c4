package enum SpeechRecognitionModule {}
