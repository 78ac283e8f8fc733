// placeholder: the io component's output.cpp lands here
