print("placeholder: the generator is being written")
