print("atrium")
