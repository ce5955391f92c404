# Roofline Console, русский. Эталон формулировок: runbook roofline-incident-ru.

app-title = Roofline Console
nav-label = Основное
nav-fleet = Парк
nav-profiles = Профили
lang-switch-label = Язык
loading = Загрузка…
not-found-title = Здесь ничего нет
not-found-back = Назад к парку

## Fleet
fleet-title = Парк движков
fleet-engine-count = { $count ->
    [one] { $count } движок
    [few] { $count } движка
   *[many] { $count } движков
}
fleet-healthy-count = { $count ->
    [one] { $count } здоров
    [few] { $count } здоровы
   *[many] { $count } здоровы
}
fleet-empty = Движков пока нет: импортируйте профиль запуска командой `roofline profile import FILE.env`.
col-state = Состояние
col-profile = Профиль
col-engine = Движок
col-address = Адрес
col-uptime = Время работы
col-pid = PID
col-model = Модель
col-port = Порт
col-updated = Изменён

## Engine states
state-stopped = остановлен
state-starting = запускается
state-healthy = здоров
state-unhealthy = не отвечает
state-dead = мёртв
badge-simulated = симулятор
badge-simulated-title = Это симулятор Roofline, а не настоящий движок на GPU.

## Startup phases
phase-launched = Процесс запущен
phase-loading-weights = Загрузка весов
phase-allocating-kv-cache = Выделение KV-кеша
phase-capturing-graphs = Захват CUDA-графов
phase-starting-server = Запуск HTTP-сервера
phase-ready = Готов
startup-progress = Ход запуска

## Engine page
actions-label = Действия с движком
action-serve = Запустить
action-stop = Остановить
action-restart = Перезапустить
action-pending = Выполняется…
confirm-serve = Запустить движок { $profile }?
confirm-stop = Остановить движок { $profile }? Запросы в работе завершатся ошибкой.
confirm-restart = Перезапустить движок { $profile }? По runbook рестарт только когда процесс мёртв, завис или OOM под нагрузкой; сначала снимите метрики и логи.
confirm-yes = Подтвердить
confirm-no = Отмена
engine-command = Командная строка
engine-log = Лог
failure-title = Последний запуск не удался
failure-symptom = Симптом
failure-cause = Причина
failure-action = Действие

## Startup failures
startup-failure-cuda-oom-load-symptom = `CUDA out of memory` при загрузке весов
startup-failure-cuda-oom-load-cause = Веса не влезают при текущем TP.
startup-failure-cuda-oom-load-action = `roofline vram`, поднять TP или взять сборку FP8/AWQ.
startup-failure-kv-too-small-symptom = max seq len модели больше, чем вмещает KV-кеш
startup-failure-kv-too-small-cause = После весов нет KV даже на один запрос.
startup-failure-kv-too-small-action = Ниже длина контекста, выше доля памяти или fp8 KV.
startup-failure-gpu-memory-taken-symptom = Свободной памяти GPU при старте меньше запрошенной доли
startup-failure-gpu-memory-taken-cause = Память GPU занята другим процессом.
startup-failure-gpu-memory-taken-action = `roofline gpu`: найти чужие процессы; снижать долю памяти, только если сосед должен остаться.
startup-failure-address-in-use-symptom = `Address already in use`
startup-failure-address-in-use-cause = На порту старый процесс или другой профиль.
startup-failure-address-in-use-action = `roofline stop` другого профиля; `roofline gpu` на чужие процессы.
startup-failure-incomplete-weights-symptom = Нет `config.json` или токенизатора
startup-failure-incomplete-weights-cause = Перенос весов не завершён.
startup-failure-incomplete-weights-action = Сверить sha256 и содержимое каталога модели.
startup-failure-unsupported-architecture-symptom = `Model architectures [...] are not supported`
startup-failure-unsupported-architecture-cause = Движок старше модели.
startup-failure-unsupported-architecture-action = Профиль с более новой версией движка; старый сохранить.
startup-failure-driver-mismatch-symptom = `no kernel image` или `CUDA driver version is insufficient`
startup-failure-driver-mismatch-cause = Не совпадают драйвер, CUDA и сборка torch.
startup-failure-driver-mismatch-action = Вернуть закреплённые версии из журнала.
startup-failure-none = Движок завершился, не став здоровым; ни одна строка таблицы сбоев запуска не подходит. Читайте лог.

## Profiles
profiles-title = Профили запуска
profiles-hint = Здесь профили только для чтения; импорт и экспорт: `roofline profile import` и `roofline profile export`.
profile-open-engine = Открыть движок
profile-file = Файл профиля
profile-untranslated = У этих настроек спекулятивного декодирования нет флага SGLang, они пропущены: { $keys }
profile-issue-syntax = не читается: { $detail }
profile-issue-unknown-key = неизвестный ключ (может быть, { $suggestion }?)
profile-issue-required = обязателен
profile-issue-not-positive-integer = должно быть целым положительным числом, а не «{ $value }»
profile-issue-fraction-range = должно быть числом в (0, 1], а не «{ $value }»
profile-issue-fraction-above-advised = { $value } выше рекомендованных 0.85–0.92
profile-issue-fraction-oom-risk = { $value } выше 0.95: будет OOM в prefill
profile-issue-port-range = должен быть портом от 1 до 65535, а не «{ $value }»
profile-issue-bad-name = «{ $value }» не годится как имя профиля (строчные латинские буквы, цифры, - и _)
profile-issue-bad-host = «{ $value }» не IP-адрес и не имя хоста
profile-issue-bad-word = «{ $value }» должно быть одним словом и не начинаться с -
profile-issue-not-json-object = должно быть JSON-объектом: { $detail }
profile-issue-reserved-env = { $value } задаёт консоль для air-gap, переопределить нельзя
profile-issue-bad-env-name = «{ $value }» не годится как имя переменной окружения
profile-issue-relative-model-path = «{ $value }» должен быть абсолютным путём внутри каталога моделей
profile-issue-unknown-engine = в конфигурации хоста нет установки движка «{ $value }»

## Errors
error-no-such-profile = Профиля { $name } нет.
error-no-such-engine = Профиль { $profile } ссылается на установку движка { $engine }, которой нет в конфигурации хоста.
error-port-busy = Порт { $port } занят: { $owner }.
error-generic = { $detail }

## Durations
duration-hm = { $h } ч { $m } мин
duration-ms = { $m } мин { $s } с
duration-s = { $s } с
