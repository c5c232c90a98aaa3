import P2P; print("echo")
