"""Where neural jobs run for the scheduler: GPU holding and threads (storyeval.neural.placement)."""

from storyeval.neural.placement import gpu_jobs, gpu_visible, job_threads


def test_a_gpu_is_seen_through_its_device_file_unless_cuda_hides_it(tmp_path):
    device = tmp_path / "nvidiactl"
    assert not gpu_visible([str(device)], {})
    device.touch()
    assert gpu_visible([str(device)], {})
    assert gpu_visible([str(device)], {"CUDA_VISIBLE_DEVICES": "0"})
    for hidden in ("", "-1"):
        assert not gpu_visible([str(device)], {"CUDA_VISIBLE_DEVICES": hidden})


def test_only_jobs_that_run_on_a_gpu_hold_it():
    assert [gpu_jobs(device, visible=False) for device in ("auto", None, "cpu", "cuda", "cuda:1")] == [0, 0, 0, 1, 1]
    assert [gpu_jobs(device, visible=True) for device in ("auto", None, "cpu", "cuda", "cuda:1")] == [1, 1, 0, 1, 1]


def test_neural_jobs_take_one_thread_on_small_machines_and_two_elsewhere():
    assert [job_threads(cores) for cores in (1, 2, 3, 4, 16, None)] == [1, 1, 1, 2, 2, 2]
