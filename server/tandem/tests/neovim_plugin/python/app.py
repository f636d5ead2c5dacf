import os; naïve: int = "été"
from models import User, total

zoë = User("Zoë"); print("é", total)
print(zoë.name)
