print("soak: not written yet")
