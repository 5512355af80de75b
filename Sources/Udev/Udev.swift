import CUdev
