def run():
    print("ok")
