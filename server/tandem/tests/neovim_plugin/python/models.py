café = "crème"; total = 42


class User:
    def __init__(self, name: str) -> None:
        self.name = name
