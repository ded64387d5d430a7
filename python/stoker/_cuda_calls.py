"""The CUDA calls the device feed and the GPU decode stage make (streams, events), in one place:
torch's. The tests hand both a stand-in that runs the same flow in host memory and records the
calls (python/tests/test_gpu_decode.py)."""
import torch


class TorchCuda:
    """Streams and events as torch.cuda makes them."""

    @staticmethod
    def stream(device):
        return torch.cuda.Stream(device=device)

    @staticmethod
    def event():
        return torch.cuda.Event()

    @staticmethod
    def use(stream):
        """A context in which `stream` is the current stream."""
        return torch.cuda.stream(stream)

    @staticmethod
    def current_stream(device):
        return torch.cuda.current_stream(device)

    @staticmethod
    def record_stream(tensor, stream):
        tensor.record_stream(stream)


TORCH_CUDA = TorchCuda()
