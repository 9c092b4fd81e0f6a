"""Settings: defaults < user file < project file < environment < flags. (Being built.)"""
