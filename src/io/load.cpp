// placeholder: the io component's load.cpp lands here
