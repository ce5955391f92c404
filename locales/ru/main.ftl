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
fleet-demo-note = Это демонстрация: симулированные движки, которые консоль запустила сама, и лёгкая демо-нагрузка, которую она им посылает (console --demo). Чтобы запустить настоящий vLLM или SGLang, опишите его установку в конфигурации хоста (roofline.toml: [engines.ИМЯ] с kind и command) и создайте для неё профиль; эта заметка исчезнет, когда появится настоящий движок.
fleet-demo-install = Руководство по установке
fleet-demo-config = Конфигурация хоста с пояснениями
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
badge-demo-traffic = демо-нагрузка
badge-demo-traffic-title = Консоль сама посылает этому движку лёгкие синтетические запросы (console --demo): очередь, KV-кэш и задержки — не от клиентов.

## Startup phases
phase-launched = Процесс запущен
phase-loading-weights = Загрузка весов
phase-profiling = Профилирование памяти
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
engine-sections = Разделы страницы движка
engine-section-overview = Обзор
engine-section-charts = Графики
engine-section-log = Лог
engine-section-runs = Прогоны
engine-section-gpu = GPU
engine-section-profile = Профиль
engine-open-profile = Открыть профиль: ключи, история и изменения
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
startup-failure-invalid-argument-symptom = `error: argument …`, `unrecognized arguments` или `ambiguous option` от разбора аргументов движка
startup-failure-invalid-argument-cause = Флаг или его значение не принимает эта версия движка.
startup-failure-invalid-argument-action = `roofline flags` покажет список установленного движка; исправить флаг из ошибки, затем запустить.
startup-failure-context-above-model-symptom = `User-specified max_model_len … is greater than the derived max_model_len`
startup-failure-context-above-model-cause = Длина контекста больше `max_position_embeddings` из config.json модели.
startup-failure-context-above-model-action = Снизить длину контекста до предела модели (его показывает калькулятор VRAM); поднимать только с поддерживаемым моделью rope scaling.
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
profile-issue-env-not-allowed = профиль не может задавать { $value }: { $reason ->
    [linker] динамический компоновщик загружает указанные в ней библиотеки
    [python] Python загружает код из того, что в ней указано
    [runs] она выбирает, что запускается
    [loads] она указывает файл, каталог, библиотеку или код для загрузки
   *[not-listed] её нет в списке разрешённых (конфигурация хоста может добавить: [launch] allow_env)
    }
profile-issue-flag-not-allowed = { $value } запрещён: { $reason ->
    [abbreviation] argparse прочтёт его как { $flag }; пишите флаг полностью
    [ambiguous] с него начинаются несколько флагов ({ $flag }); пишите флаг полностью
    [unknown] у установленного движка нет такого флага (ближайший: { $flag })
    [unverifiable] не удалось прочитать флаги установленного движка, чтобы его проверить ({ $flag })
    [load-format] допустимы только { $flag } (другие форматы распаковывают pickle, а это может выполнить код)
    [unclassified] консоль не знает, что движок делает со значением этого флага ({ $flag }), и не может его проверить; администратор хоста может разрешить флаг для установки ([engines.NAME] allow_flags)
    [not-a-choice] установленный движок принимает только { $flag }
    [relative-path] путь должен быть абсолютным и лежать внутри каталога моделей ({ $flag })
    [endpoint] движок открыл бы сокет за пределами этого хоста ({ $flag }); допустимы только адреса loopback
    [json-key] консоль не принимает эту часть JSON-значения ({ $flag })
    [not-json] значение не является тем JSON, которого ждёт движок ({ $flag })
    [word] значение не является простым именем ({ $flag })
    [positional] ни один флаг не берёт это слово своим значением
   *[code] он заставляет движок загружать код; разрешить его для установки может только конфигурация хоста ([engines.NAME] allow_flags)
    }
profile-issue-flag-repeats-field = { $value } запрещён: { $flag } задаётся полем { $field }; задайте это поле
profile-issue-path-outside-models = «{ $value }» вне корня моделей

## Errors
error-no-such-profile = Профиля { $name } нет.
error-no-such-engine = Профиль { $profile } ссылается на установку движка { $engine }, которой нет в конфигурации хоста.
error-port-busy = Порт { $port } занят: { $owner }.
error-generic = { $detail }

## Durations
duration-hm = { $h } ч { $m } мин
duration-ms = { $m } мин { $s } с
duration-s = { $s } с
# Единицы после числа ($value уже записано по правилам языка).
value-ms = { $value } мс
value-s = { $value } с
value-gib = { $value } ГиБ
value-gib-of = { $used } / { $total } ГиБ
value-w = { $value } Вт
value-w-of = { $used } / { $total } Вт
value-mhz = { $value } МГц
value-c = { $value } °C
time-utc-title = UTC: { $utc }

## Navigation (gate steps)
nav-bench = Бенчмарки

## Gate steps on the engine page
run-title = Прогоны: smoke-toolcall и bench
run-hint = Проверки из runbook после health: вызов инструментов через парсер и шаблон чата, затем задержки и пропускная способность по определениям vllm bench serve. Изменение профиля проходит те же проверки в своём гейте.
run-start-smoke = Запустить smoke-toolcall
run-start-bench = Запустить bench
run-smoke = smoke-toolcall
run-bench = bench
run-running = выполняется
run-error = ошибка
run-passed = пройден
run-failed = не пройден
run-done-of = готово { $done } из { $total }, ошибок { $failed }
run-open-result = Открыть результат
bench-requests = Запросов
bench-concurrency = Параллельно
bench-input-len = Входных токенов
bench-output-len = Выходных токенов

## smoke-toolcall
smoke-title = Последний smoke-toolcall
smoke-case = Случай
smoke-verdict = Итог
smoke-checks = Непройденные проверки
smoke-raw = Сырые ответы
smoke-pass = PASS
smoke-fail = FAIL
smoke-skip = ПРОПУСК
smoke-case-preflight = Preflight: флаги запуска и имена парсеров
smoke-case-auto-nonstream = auto, без потока
smoke-case-auto-stream = auto, поток (равен ответу без потока)
smoke-case-required = tool_choice required
smoke-case-named = tool_choice с именем
smoke-case-none = tool_choice none
smoke-case-second-turn = Второй ход с результатом инструмента
smoke-case-parallel = Параллельные вызовы
smoke-case-zero-arguments = Инструмент без аргументов
smoke-case-repeated-streams = Повторные потоки
smoke-check-no-choices = в ответе нет choices
smoke-check-args-not-string = arguments не строка
smoke-check-bad-chunk = кусок потока не JSON
smoke-check-no-done = поток не завершился
smoke-check-role-deltas = неверное число role-дельт
smoke-check-finish-count = неверное число finish_reason
smoke-check-finish-reason = неожиданный finish_reason
smoke-check-markup-leak = разметка вызова утекла в текст
smoke-check-call-count = неверное число вызовов
smoke-check-content-with-calls = текст рядом с вызовами
smoke-check-duplicate-id = у двух вызовов один id
smoke-check-missing-id = у вызова нет id
smoke-check-fragments = id или имя пришли больше одного раза
smoke-check-wrong-name = вызван не тот инструмент
smoke-check-unknown-tool = инструмент, которого не предлагали
smoke-check-args-not-json = arguments не JSON
smoke-check-args-schema = arguments не по схеме
smoke-check-args-value = неожиданные значения аргументов
smoke-check-content-missing = в ответе нет результата инструмента
smoke-check-request = запрос не удался
smoke-check-http-status = сервер ответил ошибкой
smoke-check-bad-json = ответ не JSON
smoke-check-stream-differs = поток и ответ без потока различаются
smoke-check-no-parser = парсер вызовов не задан
smoke-check-no-auto-tool-choice = auto tool choice не включён
smoke-check-parser-unknown = установленный движок не знает такой парсер

## Benchmarks
bench-title = Бенчмарки
bench-hint = Каждый прогон bench хранится с профилем, версией движка и параметрами. Отметьте два и больше, чтобы сравнить.
bench-empty = Прогонов bench пока нет: запустите со страницы движка или командой `roofline bench`.
bench-compare = { $count ->
    [one] Сравнить { $count } прогон
    [few] Сравнить { $count } прогона
   *[many] Сравнить { $count } прогонов
    }
bench-compare-title = Прогоны bench рядом
bench-version = Версия движка
bench-load = Нагрузка
bench-req-s = Запросов/с
bench-tok-s = Выходных токенов/с
bench-ttft-p50 = TTFT p50 (мс)
bench-ttft-p95 = TTFT p95 (мс)
bench-ttft-p99 = TTFT p99 (мс)
bench-tpot-p50 = TPOT p50 (мс)
bench-tpot-p95 = TPOT p95 (мс)
bench-itl-p95 = ITL p95 (мс)
bench-e2el-p95 = Сквозная задержка p95 (мс)
bench-failed = Неудачных запросов

## Live signals (fleet)
state-hung = завис
hang-flat = { $pending } { $pending ->
    [one] запрос
    [few] запроса
   *[many] запросов
    } в работе и в очереди, но за { $seconds } с ни одного токена, токена промпта или шага движка (завис { $held } с назад)
hang-probe = /health отвечает, но запрос на один токен остался без ответа за { $seconds } с (завис { $held } с назад)
hang-no-connection = API-сервер не принимает соединений: /health без ответа уже { $seconds } с (завис { $held } с назад)
col-waiting = В очереди
col-kv = KV-кеш
col-ttft-p95 = TTFT p95
col-itl-p95 = ITL p95
col-running = Выполняется
col-probe = Проба генерации

## Графики (страница движка)
charts-title = Графики в реальном времени
timeline-title = Состояние за период
timeline-empty = За этот период состояние ещё не записано.
timeline-summary = { $starts ->
    [one] { $starts } запуск
    [few] { $starts } запуска
   *[many] { $starts } запусков
    }, { $incidents ->
    [0] ни разу не зависал и не падал
    [one] завис или упал { $incidents } раз
    [few] зависал или падал { $incidents } раза
   *[many] зависал или падал { $incidents } раз
    }
range-label = Интервал
range-15m = 15 мин
range-1h = 1 час
range-24h = 24 часа
range-7d = 7 дней
range-30d = 30 дней
chart-queue = Запросы: в работе и в очереди
chart-kv = Заполнение KV-кеша, %
chart-preemptions = Вытеснения в секунду
chart-latency = Перцентили задержки, мс
chart-prefix-hit = Попадания в префиксный кеш, %
chart-throughput = Пропускная способность, токенов/с
chart-gpu-memory = Память GPU, ГиБ
chart-gpu-load = Загрузка GPU (%) и температура (°C)
series-time = Время
series-running = в работе
series-waiting = в очереди
series-kv-usage = KV-кеш
series-preemptions = вытеснений/с
series-ttft-p50 = TTFT p50
series-ttft-p95 = TTFT p95
series-ttft-p99 = TTFT p99
series-tpot-p50 = TPOT p50
series-tpot-p95 = TPOT p95
series-tpot-p99 = TPOT p99
series-e2e-p95 = E2E p95
series-queue-p95 = ожидание в очереди p95
series-prefix-hit = доля попаданий
series-prompt-tps = токенов промпта/с
series-generation-tps = сгенерировано токенов/с
series-gpu-memory-used = занято
series-gpu-memory-total = всего
series-gpu-util = загрузка %
series-gpu-temp = температура °C
chart-engine-not-running = Движок не запущен: собирать нечего.
chart-no-metrics = Нет метрик от движка: { $reason }
chart-waiting = Ждём первых снимков /metrics.
chart-nosource-queue = В /metrics этого движка { $engine } нет счётчиков запросов в работе и в очереди (метрики выключены или переименованы в этой версии).
chart-nosource-kv = В /metrics этого движка { $engine } нет заполнения KV-кеша.
chart-nosource-preemptions = Этот движок { $engine } не отдаёт счётчик вытеснений (SGLang отдаёт его только в версиях с num_retracted_requests_total).
chart-nosource-latency = За окно не завершился ни один запрос, или этот движок { $engine } не отдаёт гистограммы задержек.
chart-nosource-prefix-hit = За окно не было обращений к префиксному кешу, или у этого движка { $engine } он выключен.
chart-nosource-throughput = Этот движок { $engine } ещё не отдаёт счётчики токенов (с запуска не обслужено ни одного запроса).
chart-nosource-gpu = Ни на одном GPU нет процессов этого движка.
chart-nosource-gpu-simulated = Симулятор не использует GPU.

## GPU
gpu-title = GPU
gpu-no-driver = На этом хосте нет драйвера NVIDIA, показаний GPU нет ({ $reason }).
gpu-driver = Драйвер { $driver }
gpu-col-name = GPU
gpu-col-memory = Память
gpu-col-util = Загрузка
gpu-col-temp = Температура
gpu-col-power = Мощность / предел
gpu-col-clock = Частота SM
gpu-col-throttle = Причины троттлинга
gpu-col-processes = Процессы
gpu-foreign = чужой

## Парк по хостам
state-unreachable = недоступен
col-host = Хост
col-gpu-mem = Память GPU
col-gpu-temp = Темп. GPU
col-tpot-p95 = TPOT p95
host-local = этот хост
sort-by = Сортировать по столбцу «{ $column }»
fleet-unreachable-host = Хост { $host } не ответил: { $reason }

## Инциденты: мастер разбора, таймлайн, постмортем
nav-incidents = Инциденты
incidents-title = Инциденты
incidents-empty = Инцидентов нет. Откройте инцидент со страницы движка, командой `roofline triage --profile NAME` или вебхуком Alertmanager.
incident-open = Открыть инцидент
incident-open-hint = Сначала снимает метрики, логи, состояние GPU и профиль, затем проходит разбор.
incident-clients-errors = Клиенты видят ошибки, хотя движок выглядит здоровым
incident-title = Инцидент №{ $id }: { $profile }
incident-opened = Открыт
incident-opened-by = Кем открыт
incident-status-open = открыт
incident-status-resolved = закрыт
incident-steps = Разбор: health → metrics → GPU → logs
incident-diagnosis = Диагноз
incident-no-finding = Ни одна строка runbook не подходит: движок выглядит здоровым.
incident-also = Также выполняется
incident-after-upgrade = после обновления
incident-after-upgrade-note = Незадолго до симптомов было изменение: сначала smoke-toolcall. Откат: остановить этот профиль и запустить прежний (профили не удаляются до прохождения gate).
incident-action-col = Действие
incident-actions = Действия, по одному за раз
incident-action-smoke = Запустить smoke-toolcall
incident-action-edit-profile = Предложить изменение профиля на ревью: { $change }
incident-action-serve = Запустить
incident-action-stop = Остановить
incident-action-restart = Перезапустить
incident-action-reason = Причина (попадёт в таймлайн)
incident-action-reason-required = Сначала укажите причину.
incident-action-confirm = { $action }? После действия health и metrics проверяются снова.
incident-restart-not-offered = Перезапуск не предлагается: очередь и медленный p95 рестарт не лечит (рестарт только когда процесс мёртв, завис или OOM под нагрузкой).
incident-latest = После последнего действия
incident-resolve = Закрыть инцидент
incident-timeline = Таймлайн
incident-note = Добавить заметку
incident-note-add = Добавить
incident-investigator = Расследование (весь лог)
incident-capture = Снято, когда консоль признала движок в состоянии «{ $state }», до любых действий
incident-capture-no-stacks = Стеков Python нет
incident-capture-pid = PID
incident-capture-name = Процесс
incident-capture-state = Состояние
incident-capture-rss = Память
incident-capture-stack = Стек
incident-capture-stack-show = Показать стек (py-spy)
incident-capture-log = Лог на тот момент
incident-verdict = Вердикт: { $verdict }
step-health = Health
step-metrics = Метрики
step-gpu = GPU
step-logs = Логи
step-nothing = ничего не найдено
timeline-opened = Инцидент открыт ({ $source }); данные сняты.
timeline-diagnosis = Диагноз: { $diagnosis }
timeline-action = Действие: { $action }. Причина: { $reason }
timeline-outcome-ok = { $action }: выполнено, { $detail }
timeline-outcome-failed = { $action }: ошибка, { $detail }
timeline-recheck = Повторная проверка: движок { $state }; { $diagnosis }
timeline-alert = Алерт { $name }: { $status }
timeline-resolved = Инцидент закрыт.
ev-health-status = /health ответил { $code } за { $ms } мс
ev-health-none = /health: нет ответа (000)
ev-probe-ok = completion на один токен ответил за { $ms } мс
ev-probe-failed = completion на один токен: нет ответа за 5 с
ev-state = состояние процесса: { $state }
ev-queue-stuck = запросов в движке { $from } → { $to }, ни одного сгенерированного токена
ev-metrics-none = метрик нет: { $reason }
ev-metrics-empty = в окне пока нет снимков метрик
ev-waiting = waiting { $from } → { $to } за { $minutes } мин
ev-kv = заполнение KV-кеша { $pct }%
ev-waiting-kv = waiting { $from } → { $to } за { $minutes } мин при заполнении KV { $pct }%
ev-preemptions = preemptions { $rate }/с
ev-ttft-hit = TTFT p95 { $from } → { $to } мс, при этом hit rate префиксного кеша упал { $hit_from }% → { $hit_to }%
ev-tpot = TPOT p95 { $from } → { $to } мс при том же трафике ({ $running } в работе)
ev-gpu = GPU { $index }: { $used } / { $total } ГиБ, { $temp } °C, троттлинг: { $throttle }
ev-gpu-none = GPU: { $reason }
ev-gpu-foreign = GPU { $index }: чужой процесс { $pid }
ev-log-line = строка лога { $line }: { $text }
ev-pin-moved = { $field ->
    [engine] движок
    [driver] драйвер NVIDIA
    [cuda] CUDA (сборка torch)
    [image] образ
   *[other] { $field }
    }: закреплено { $pinned }, сейчас { $current }; верните закреплённую версию по журналу
ev-pin-same = { $field ->
    [engine] движок
    [driver] драйвер NVIDIA
    [cuda] CUDA (сборка torch)
    [image] образ
   *[other] { $field }
    }: { $current }, как закреплено
ev-model-finding = проверка модели: { $file }: { $detail }
ev-log-signature = { $signature } × { $count }, последняя в строке { $line }: { $text }
ev-clients-errors = клиенты видят ошибки, при этом health и метрики в норме
rule-dead-diagnosis = Процесс мёртв или порт закрыт
rule-dead-action = Последняя ошибка в логе; проверить, что память GPU освобождена; затем запустить.
rule-hung-diagnosis = Движок завис (часто после CUDA-ошибки или NCCL-таймаута при TP)
rule-hung-action = Лог на CUDA error, NCCL, watchdog; затем перезапуск.
rule-kv-exhausted-diagnosis = KV-кеш исчерпан, запросы ждут
rule-kv-exhausted-action = Ниже max-model-len или fp8 KV в профиле; временно ограничить клиентов.
rule-seq-capped-diagnosis = Упор в max-num-seqs или compute decode
rule-seq-capped-action = Поднять max-num-seqs после bench; вторая реплика.
rule-preemptions-diagnosis = Под нагрузкой KV переполняется, recompute
rule-preemptions-action = Как для KV; preemption удваивает prefill.
rule-prefix-miss-diagnosis = Клиенты шлют новый префикс, кеш не работает
rule-prefix-miss-action = Сверить системный промпт, маршрутизацию по сессии.
rule-tpot-neighbor-diagnosis = Соседний процесс на GPU, троттлинг по температуре или мощности
rule-tpot-neighbor-action = Проверить GPU: процессы, температура, ватты.
rule-proxy-parser-diagnosis = Прокси, таймауты, парсер
rule-proxy-parser-action = smoke-toolcall против endpoint прокси; таймаут прокси против e2e p99.
rule-oom-start-weights-diagnosis = OOM при старте: веса не влезают при TP
rule-oom-start-weights-action = Калькулятор VRAM; TP, FP8, другой GPU.
rule-oom-start-kv-diagnosis = OOM при старте: после весов нет KV на один запрос
rule-oom-start-kv-action = Ниже max-model-len, выше utilization, fp8 KV.
rule-oom-under-load-diagnosis = OOM под нагрузкой: prefill длинного промпта уронил движок
rule-oom-under-load-action = Utilization 0.88–0.90, включить chunked prefill, max-num-batched-tokens 8192; затем перезапуск.
rule-start-gpu-memory-taken-diagnosis = Старт не удался: память GPU занята другим процессом
rule-start-gpu-memory-taken-action = Найти чужой процесс на GPU; снижать долю памяти, только если он должен остаться.
rule-start-address-in-use-diagnosis = Старт не удался: порт занят
rule-start-address-in-use-action = Остановить другой профиль или процесс на порту, затем запустить.
rule-start-incomplete-weights-diagnosis = Старт не удался: нет config.json или токенизатора (веса скопированы не полностью)
rule-start-incomplete-weights-action = Заново скопировать каталог модели и проверить его, затем запустить.
rule-start-unsupported-arch-diagnosis = Старт не удался: движок не знает эту архитектуру
rule-start-unsupported-arch-action = Версия движка, которая поддерживает модель (или её плагин).
rule-start-driver-mismatch-diagnosis = Старт не удался: драйвер, CUDA и torch не совпадают
rule-start-driver-mismatch-action = Привести драйвер в соответствие со сборкой CUDA движка.
rule-start-invalid-argument-diagnosis = Старт не удался: движок отверг свою командную строку
rule-start-invalid-argument-action = Исправить флаг, который называет разбор аргументов (`roofline flags` покажет, что принимает эта версия), затем запустить.
rule-start-context-above-model-diagnosis = Старт не удался: длина контекста больше предела модели
rule-start-context-above-model-action = Снизить длину контекста до max_position_embeddings модели, затем запустить.
rule-start-failed-diagnosis = Старт не удался: движок завершился на приведённой ошибке (ни одна строка таблицы сбоев старта её не называет)
rule-start-failed-action = Прочитать приведённую строку первопричины и трассировку перед ней; исправить это, затем запустить.
postmortem-title = Постмортем
postmortem-heading = Постмортем: инцидент { $id } ({ $profile })
postmortem-status = Статус
postmortem-draft = черновик
postmortem-final = итоговый
postmortem-symptom = Симптом
postmortem-timeline = Таймлайн
postmortem-metrics = Метрики до и после
postmortem-before = До
postmortem-after = После
postmortem-root-cause = Корневая причина
postmortem-what-changed = Что изменили
postmortem-catch-earlier = Что добавить в bench или smoke, чтобы ловить раньше
postmortem-window = waiting { $waiting }, KV { $kv }, TTFT p95 { $ttft }, TPOT p95 { $tpot }, preemptions { $preemptions }
postmortem-save-draft = Сохранить черновик
postmortem-save-final = Сохранить как итоговый
postmortem-saved = Сохранено.
postmortem-export = Экспорт в Markdown

## Калькулятор VRAM
nav-vram = VRAM
vram-title = Калькулятор VRAM
vram-intro = Влезет ли модель, сколько токенов KV-кеша получит движок и сколько запросов такой длины пойдут одновременно. Тот же расчёт, что в `roofline vram`; после запуска `roofline vram --profile NAME` сверяет его с логом движка.
vram-model = Модель (в каталоге моделей)
vram-weights-gib = Веса, ГиБ (пусто: по файлам модели)
vram-gpu-gib = Память GPU, ГиБ
vram-tp = Tensor parallel
vram-util = Доля памяти (utilization)
vram-ctx = Длина контекста, токенов
vram-kv-dtype = Тип KV-кеша
vram-concurrency = Запросов одновременно (необязательно)
vram-paste-config = Или вставьте config.json
vram-choose = Выберите модель или вставьте config.json.
vram-need-weights = Укажите размер весов в ГиБ: у вставленного config.json нет файлов весов.
vram-weights-per-gpu = Веса на GPU
vram-kv-per-token = Байт KV на токен на GPU
vram-kv-tokens = Размер KV-кеша, токенов
vram-max-concurrency = Максимум одновременных запросов при этом контексте
vram-max-ctx = Самый длинный контекст, который влезает
vram-budget = Бюджет KV на GPU
vram-verdict-fits = Влезает.
vram-verdict-weights-do-not-fit = Не влезает: одни веса больше доли GPU. Больше TP, FP8-веса или GPU побольше.
vram-verdict-overhead-does-not-fit = Не влезает: веса помещаются, но не вместе с пиком активаций, памятью вне torch и CUDA-графами, которые нужны движку (или с заданным размером KV). Уменьшить батч (max batched tokens), размер KV или поднять TP.
vram-verdict-kv-too-small = Не влезает: после весов нет KV на один запрос такой длины. Ниже контекст, выше utilization или fp8 KV.
vram-verdict-context-above-max = Контекст длиннее max_position_embeddings модели.
vram-verdict-concurrency-queues = Запустится, но столько запросов одновременно встанут в очередь: KV вмещает меньше.

## Журнал изменений
nav-journal = Журнал
journal-title = Журнал изменений
journal-intact = Цепочка хешей проверена: { $count ->
    [one] { $count } запись
    [few] { $count } записи
   *[many] { $count } записей
}, ничего не изменено и не удалено.
journal-broken = Журнал изменён задним числом: запись №{ $seq }: { $why }.
journal-alarm = Журнал изменений не принимает новые записи: { $why }. Действия выполняются, их записи ждут в очереди, пока администратор не восстановит резервную копию (`roofline restore`).
database-away = Общая база данных не отвечает с
database-away-detail = Хост работает в ограниченном режиме: его движки продолжают работать, запускать, останавливать и перезапускать их можно здесь; другие хосты, учётные записи, изменения и история ждут базу; записи журнала сохраняются и будут записаны по порядку, когда она вернётся.
journal-search = Искать
journal-export = Экспорт в JSON
journal-empty = Пока ничего не записано.
journal-at = Когда
journal-who = Кто
journal-kind = Что
journal-reason = Почему
journal-detail = Контекст

## Редактор профиля
editor-title = Изменение профиля { $name }
editor-back = Назад к профилю
editor-intro = Поля в порядке флагов из runbook; шаг открывается, когда предыдущие шаги без ошибок. Командная строка обновляется по мере ввода; при выборе установки другого движка флаги переводятся.
editor-step-model = 1. Модель и имя
editor-step-parallelism = 2. Параллелизм
editor-step-context = 3. Контекст
editor-step-memory = 4. Память
editor-step-parsers = 5. Парсеры
editor-step-quantization = 6. Квантизация и KV-кеш
editor-step-batching = 7. Батчинг
editor-step-speculation = 8. Спекулятивное декодирование
editor-step-network = 9. Адрес и дополнительные аргументы
editor-argv-invalid = Исправьте ошибки выше, чтобы увидеть командную строку.
editor-check-flags = Сверить флаги с установленным движком
editor-flags-ok = Все флаги известны установленному движку ({ $version }).
editor-diff = Изменения относительно активной версии
editor-no-change = Изменений пока нет.

## Учётные записи и вход
error-unauthorized = Сначала войдите ({ $detail }).
error-forbidden = Нет прав: { $detail }
error-too-many = Не сейчас: { $detail }
nav-sign-in = Войти
nav-sign-out = Выйти
nav-accounts = Учётные записи
nav-changes = Изменения
role-viewer = наблюдатель
role-operator = оператор
role-approver = согласующий
role-admin = администратор
login-title = Вход
login-needs-setup = Учётных записей ещё нет. Одноразовый секрет для первого администратора напечатан в логе консоли.
login-already = Вы вошли как { $name }.
login-name = Имя пользователя
login-password = Пароль
login-submit = Войти
login-error-wrong = Неверное имя пользователя или пароль.
login-error-wait = Слишком много неудачных попыток входа под этим именем или с этого адреса. Повторите через { $seconds ->
    [one] { $seconds } секунду
    [few] { $seconds } секунды
   *[many] { $seconds } секунд
}.
login-error-busy = Консоль занята проверкой паролей. Повторите через несколько секунд.
login-error-failed = Вход не удался на стороне консоли; подробности в её журнале.
setup-title = Первый администратор
setup-intro = Вставьте одноразовый секрет из лога консоли. Он действует один раз; дальше учётные записи создают администраторы на странице «Учётные записи».
setup-secret = Секрет настройки
setup-submit = Создать администратора и войти
password-rule = Не короче { $min } { $min ->
    [one] символа
   *[other] символов
}; лучше всего — фраза.
account-title = Ваша учётная запись
account-old-password = Текущий пароль
account-new-password = Новый пароль
account-change-password = Сменить пароль (выход на всех устройствах)
accounts-title = Учётные записи
accounts-role = Роль
accounts-initial-password = Начальный пароль
accounts-create = Создать учётную запись
accounts-state = Состояние
accounts-created = Создана
accounts-enable = Включить
accounts-disable = Отключить
accounts-disabled = отключена

## Изменения профилей: ревью, согласование, гейт
profile-propose = Предложить изменение
editor-editing-change = Доработка изменения №{ $id }.
editor-save-draft = Сохранить черновик
editor-submit = Отправить на ревью
editor-review-hint = Изменение вступает в силу только после одобрения другим человеком и прохождения гейта: кандидат запускается, затем должны пройти health, smoke-toolcall и бенчмарк.
changes-title = Изменения
changes-intro = Предложенные изменения профилей, их ревью и гейт.
changes-empty = Изменений пока нет.
change-title = Изменение №{ $id } профиля { $profile }
change-author = Автор
change-state = Состояние
change-updated = Обновлено
change-stale = Активный профиль изменился после того, как было написано это изменение. Доработайте его относительно текущего профиля и отправьте снова.
change-edit = Изменить
change-withdraw = Отозвать
change-start-gate = Запустить гейт
change-content-hash = Содержимое (SHA-256); одобрение относится ровно к нему
engine-current-incident = По этому движку открыт инцидент №{ $id }: разбор, действия и постмортем
change-note-label = Комментарий к изменению
change-lines = Строки как написаны
change-key = Ключ
change-before = До (активный)
change-after = После (это изменение)
change-key-unset = не задан
change-rendered-by = Командная строка и флаги в том виде, в каком их строит { $host } по своей конфигурации: хост, на котором работает этот движок.
change-render-note = Хост движка не построил это изменение ({ $why }); показано так, как его строит конфигурация этой консоли. Тот хост проверит профиль ещё раз перед запуском движка.
change-extra-flags = Дополнительные флаги, как их прочла политика запуска
flag-class = { $class ->
    [switch] переключатель: без значения
    [number] число или размер
    [choice] одно из значений, перечисленных установленным движком
    [checked] проверено: пути внутри каталога моделей, адреса loopback, известные ключи JSON
    [allowed] разрешён конфигурацией этого хоста ([engines.NAME] allow_flags), не проверяется
   *[unverified] здесь не проверяется: сервер проверит его по установленному движку
    }
change-argv = Командная строка
change-argv-same = Командная строка не меняется (изменение касается только того, что хранит консоль, а не флагов движка).
change-verdicts = Калькулятор VRAM
change-verdict-detail = KV-кэш на { $tokens ->
    [one] { $tokens } токен
    [few] { $tokens } токена
   *[many] { $tokens } токенов
    }; одновременно запросов по { $ctx ->
    [one] { $ctx } токену
    [few] { $ctx } токена
   *[many] { $ctx } токенов
    }: { $concurrency }; бюджет KV на GPU: { $budget } ГиБ.
change-comment = Комментарий
change-approve = Одобрить
change-request-changes = Запросить доработку
change-rollback = Откат к предыдущему профилю
change-gate = Гейт
change-gate-thresholds = Бенчмарк: { $requests } запросов при параллелизме { $concurrency }; не более { $failed } неудачных, TTFT p95 ≤ { $ttft } мс, TPOT p95 ≤ { $tpot } мс.
change-gate-none = Гейт ещё не запускался.
change-bench-run = Открыть бенчмарк гейта
change-history = История
change-state-draft = черновик
change-state-submitted = на ревью
change-state-changes-requested = нужна доработка
change-state-approved = одобрено
change-state-gating = идёт гейт
change-state-gate-failed = гейт не пройден
change-state-active = активно
change-state-rolled-back = откачено
change-state-withdrawn = отозвано
change-event-drafted = сохранил(а) черновик
change-event-submitted = отправил(а) на ревью
change-event-approved = одобрил(а)
change-event-changes-requested = запросил(а) доработку
change-event-withdrawn = отозвал(а) изменение
change-event-gate-started = запустил(а) гейт
change-event-gate-passed = гейт пройден: изменение активно
change-event-gate-failed = гейт не пройден: остаётся прежний профиль
change-event-rolled-back = откатил(а) к предыдущему профилю
change-gate-step-serve = Запуск кандидата
change-gate-step-health = Health и генерация одного токена
change-gate-step-smoke = smoke-toolcall
change-gate-step-bench = Пороги бенчмарка
change-gate-step-restore = Повторный запуск прежнего профиля
change-gate-step-activate = Кандидат становится активным
change-check-failed = Неудачные запросы
change-check-ttft-p95 = TTFT p95
change-check-tpot-p95 = TPOT p95
change-check-output-throughput = Пропускная способность вывода
change-check-client = Клиент бенчмарка
change-gate-running = выполняется…
change-rollback-reason = Причина (попадёт в журнал)
change-gate-serve-started = запущен (pid { $pid })
change-gate-serve-running = уже работает (pid { $pid })
change-gate-health-ok = /health ответил за { $health_ms } мс, один токен за { $completion_ms } мс
change-gate-smoke-ok = пройдено кейсов: { $count }
change-gate-smoke-failed = не пройдены кейсы: { $cases }
change-gate-bench-ok = запросов: { $requests }; TTFT p95 { $ttft } мс, TPOT p95 { $tpot } мс
change-gate-bench-failed = превышены пороги: { $checks }
change-gate-restore-ok = прежний профиль снова работает (pid { $pid })
vram-check-title = KV-кэш: прогноз против движка
vram-check-line = Прогноз { $predicted } токенов, движок сообщил { $observed } (ошибка { $error }%), для GPU на { $gpu } ГиБ ({ $source }).
vram-check-concurrency = Максимальная параллельность: движок { $observed }x, прогноз { $predicted }x.
accounts-password = Пароль
accounts-set-password = Задать (завершит их сеансы)
needs-operator = Нужна роль оператора
unit-ms = мс
unit-tok-s = ток/с
change-check-client-ok = успевал по расписанию
change-check-client-overloaded = отставал от расписания
change-check-client-limit = должен успевать по расписанию
vram-check-source-nvml = NVML
vram-check-source-simulator = GPU симулятора
change-event-commented = прокомментировал(а)
change-add-comment = Комментировать
investigator-no-row = ни одна строка runbook не подходит: в логе нет сбоя
investigator-action = Действие по runbook: { $action }
rule-gpu-fault-diagnosis = Сбой GPU: драйвер сообщил об аппаратной ошибке рядом со сбоем движка
rule-gpu-fault-action = Это железо, а не профиль: уведите движок с этой GPU (CUDA_VISIBLE_DEVICES), проверьте `nvidia-smi -q` и dmesg, перезагрузите или замените GPU, прежде чем снова запускать на ней.
ev-stalled-phase = Застрял на фазе «{ $phase ->
    [launched] запуск процесса
    [loading-weights] загрузка весов
    [profiling] профилирование памяти
    [allocating-kv-cache] выделение KV-кеша
    [capturing-graphs] захват CUDA-графов
    [starting-server] запуск HTTP-сервера
   *[other] { $phase }
}»: уже { $elapsed } с, медиана { $median } с по { $starts ->
    [one] { $starts } прошлому запуску
    [few] { $starts } прошлым запускам
    [many] { $starts } прошлым запускам
   *[other] { $starts } прошлым запускам
}
ev-gpu-xid = за { $seconds } с до этого: Xid { $xid } на GPU { $index }: { $meaning } ({ $blame ->
    [hardware] железо
    [driver] драйвер или прошивка
   *[application] обычно приложение
})
ev-gpu-ecc = GPU { $index }: неисправленных ошибок ECC: { $count }{ $pending ->
    [yes] , ждёт ремонта памяти (нужен сброс)
   *[no] {""}
}
startup-timeline-title = Фазы запуска: последний запуск против предыдущего
startup-timeline-phase = Фаза
startup-timeline-this = Последний запуск
startup-timeline-previous = Запуск перед ним
vram-check-memory = KV-пул: движок сообщил { $observed } ГиБ, прогноз { $predicted } ГиБ.
vram-check-calibrated = Откалибровано по запуску { $at }.

change-gate-step-vram = Калькулятор VRAM
change-gate-vram-fits = влезает: KV на { $tokens } токенов, { $concurrency }x запросов по { $ctx } токенов{ $calibrated ->
    [yes] {" "}(откалибровано по последнему запуску)
   *[no] {""}
}
change-gate-vram-concurrency-queues = запустится: KV на { $tokens } токенов, { $concurrency }x запросов по { $ctx } токенов; заданный параллелизм встанет в очередь{ $calibrated ->
    [yes] {" "}(откалибровано по последнему запуску)
   *[no] {""}
}
change-gate-vram-weights-do-not-fit = не влезает: одни веса больше доли GPU; активный движок оставлен работать
change-gate-vram-overhead-does-not-fit = не влезает: веса помещаются, накладные расходы движка поверх них — нет; активный движок оставлен работать
change-gate-vram-kv-too-small = не влезает: нет KV на один запрос в { $ctx } токенов (KV на { $tokens } токенов); активный движок оставлен работать
change-gate-vram-context-above-max = не влезает: { $ctx } токенов длиннее max_position_embeddings модели; активный движок оставлен работать
change-gate-vram-marginal = может не влезть ({ $verdict } в центральной оценке, влезает в пределах диапазона): решит запуск
change-gate-vram-unknown = прогноза нет ({ $reason }): решит запуск

vram-marginal = На грани: в пределах диапазона неизвестных входных данных вердикт меняется.
vram-gpu = GPU
vram-engine-version = Версия движка
vram-concurrency-at = Одновременных запросов по { $ctx } токенов
vram-path = Путь движка
vram-not-calibrated = Ещё не откалибровано: у профиля нет запуска на этом GPU, версии движка, модели и TP.
vram-arithmetic = Расчёт
vram-profile-title = Профиль на этом хосте
vram-profile = Профиль
editor-vram = Прогноз памяти GPU
editor-vram-breakdown-show = Показать расчёт
editor-vram-breakdown-hide = Скрыть расчёт
editor-default = по умолчанию: { $value }
editor-flag-deprecated = В этой версии флаг помечен устаревшим.
editor-verdict-line = KV-кэш на { $tokens ->
    [one] { $tokens } токен
    [few] { $tokens } токена
   *[many] { $tokens } токенов
    }: одновременно запросов по { $ctx ->
    [one] { $ctx } токену
    [few] { $ctx } токена
   *[many] { $ctx } токенов
    }: { $concurrency }.
advice-MODEL = Каталог весов в корне моделей (safetensors, config.json, файлы токенизатора).
advice-SERVED_MODEL_NAME = Клиенты обращаются к модели по этому имени, а не по пути.
advice-TENSOR_PARALLEL = По числу GPU в группе NVLink.
advice-CONTEXT_LENGTH = Не ставьте максимум модели по привычке: возьмите значение из калькулятора ниже.
advice-MEM_FRACTION = 0,85–0,92; выше 0,95 — OOM на prefill.
advice-TOOL_CALL_PARSER = По семейству модели; после старта проверяет smoke-toolcall.
advice-REASONING_PARSER = По семейству модели, для моделей, которые рассуждают перед ответом.
advice-QUANTIZATION = Только после замера качества против модели без квантизации.
advice-KV_CACHE_DTYPE = KV в fp8 вмещает примерно вдвое больше токенов; только после замера качества.
advice-MAX_RUNNING_REQUESTS = Батчинг — после того как модель работает: меняйте с бенчем до и после.
advice-MAX_BATCHED_TOKENS = Токенов за шаг планировщика (кусок prefill); с калькулятором, бенч до и после.
advice-SPECULATIVE_CONFIG = В последнюю очередь, после бенча без неё.

nav-models = Модели
models-title = Каталоги моделей
models-intro = Каталоги в корне моделей. Проверьте каталог до запуска на изолированном хосте: есть config.json, tokenizer.json, tokenizer_config.json с chat template и generation_config.json; веса только safetensors (pickle-файлы могут выполнить код при загрузке); индекс и шарды согласованы; каждый файл совпадает с SHA256SUMS. Однажды посчитанные файлы не читаются снова, пока не изменились.
models-none = В корне моделей нет каталогов.
models-verify = Проверить
models-progress = Хеширование: { $pct }% ({ $done } из { $total } ГБ, файлов { $files } из { $count })
models-verified = Проверено: { $files ->
    [one] { $files } файл
    [few] { $files } файла
   *[other] { $files } файлов
}, { $gb } ГБ; посчитано { $hashed }, из кеша { $cached }, за { $ms } мс.
models-not-verified = Не проверено: { $files ->
    [one] { $files } файл
    [few] { $files } файла
   *[other] { $files } файлов
}, { $gb } ГБ; посчитано { $hashed }, из кеша { $cached }, за { $ms } мс.
models-manifest-checked = Каждый файл совпадает с SHA256SUMS.
models-manifest-unchecked = Хеши не проверены.
model-finding-missing = нет обязательного файла
model-finding-no-chat-template = нет chat template
model-finding-pickle = pickle-веса запрещены
model-finding-index = индекс safetensors не читается
model-finding-header = заголовок safetensors не читается
model-finding-shard-size = размер шарда не совпадает с заголовком
model-finding-index-mismatch = индекс и шард расходятся
model-finding-shard-missing = нет шарда из индекса
model-finding-shard-unindexed = шард не указан в индексе
model-finding-no-safetensors = нет весов safetensors
model-finding-weights-simulated = весов нет: движок — симулятор, он их не загружает
model-finding-no-manifest = нет манифеста SHA256SUMS
model-finding-manifest = манифест не читается
model-finding-not-in-manifest = нет в манифесте
model-finding-manifest-missing-file = нет файла из манифеста
model-finding-unreadable = файл не читается
model-finding-hash-mismatch = SHA-256 не совпадает с манифестом
model-finding-not-hashed = ещё не посчитан
model-finding-broken-link = битая ссылка
model-finding-link-outside = ссылка за пределы корня моделей
model-finding-link-dir = ссылка на каталог
model-finding-too-deep = слишком глубокая вложенность
model-finding-special-file = не обычный файл
model-finding-odd-name = имя файла, которое манифест не может содержать
change-gate-step-metrics = Имена метрик, которые читает консоль
change-gate-metrics-ok = все сигналы, которые читает консоль, на месте
change-gate-metrics-warned = нет { $signals }; консоль обойдётся без них
change-gate-metrics-failed = нет источника для { $signals }: сводка парка и триаж ослепнут
change-gate-metrics-unknown = не проверено ({ $reason })
change-gate-step-model = Каталог модели
change-gate-model-ok = проверено: файлов { $files }, предупреждений { $warnings }{ $manifest ->
    [yes] ; каждый файл совпадает с SHA256SUMS
   *[no] ; хеши не проверены
}
change-gate-model-failed = { $error }
change-gate-model-warned = не проверено, хост только предупреждает: { $error }

## Проверка перед обновлением (редактор, когда меняется установка)
upgrade-title = Проверка перед обновлением
upgrade-check-again = Проверить снова
upgrade-versions = С { $from } ({ $fromVersion }) на { $to } ({ $toVersion }), для профиля в редакции
upgrade-verdict-clear = Ничто здесь не мешает запуску: предложите изменение, гейт запустит и проверит его.
upgrade-verdict-blocked = { $count ->
    [one] { $count } замечание не даст движку запуститься
    [few] { $count } замечания не дадут движку запуститься
   *[many] { $count } замечаний не дадут движку запуститься
    }: исправьте профиль до того, как предлагать изменение.
upgrade-finding-removed = { $flag }: в новой версии такого флага нет; движок откажется запускаться
upgrade-finding-renamed = { $flag } теперь называется { $to }
upgrade-finding-retyped = { $flag } был { $from }, теперь принимает { $to }
upgrade-finding-value-gone = { $flag } { $value }: такого значения среди вариантов новой версии больше нет
upgrade-finding-deprecated = { $flag } в новой версии устарел: { $help }
upgrade-finding-default-changed = { $flag } профиль оставляет движку, а значение по умолчанию меняется с { $from } на { $to }
upgrade-closest = (ближайшее: { $suggestion })
upgrade-other-defaults = { $count ->
    [one] Меняется значение по умолчанию у { $count } флага, который профиль не задаёт
    [few] Меняются значения по умолчанию у { $count } флагов, которые профиль не задаёт
   *[many] Меняются значения по умолчанию у { $count } флагов, которые профиль не задаёт
    }
upgrade-metrics-unchecked = Имена метрик проверяются, когда гейт изменения запускает эту установку.
upgrade-metrics-ok = Имена метрик: гейт изменения №{ $change } нашёл все сигналы, которые читает консоль.
upgrade-metrics-missing = Гейт изменения №{ $change } не нашёл сигнала { $signal } (консоль читает { $names })
upgrade-keep-old = Профиль в нынешнем виде остаётся сохранённым: изменение проходит ревью и гейт, сначала smoke-toolcall, и один откат его возвращает.

## Закреплённые версии (страница профиля)
profile-known-good = Проверенный набор
profile-known-good-none = Запусков ещё не было: набор закрепится при следующем здоровом запуске.
profile-known-good-when = Закреплено { $at } на { $install }; после неудачного обновления верните эти версии (журнал хранит каждый набор).
profile-known-good-bench = Bench гейта (прогон №{ $run }): TTFT p95 { $ttft } мс, TPOT p95 { $tpot } мс, вывод { $throughput } ток/с
profile-known-good-no-bench = Bench гейта на этом наборе ещё не запускался.
pin-field-engine = Версия движка
pin-field-torch = torch
pin-field-cuda = CUDA (сборка torch)
pin-field-driver = Драйвер NVIDIA
pin-field-image = Дайджест образа
value-kilo-tokens = { $value }К
value-mega-tokens = { $value }М
vram-gpu-pick = GPU
vram-gpu-custom = Вручную (ниже)
vram-gpu-host = Этот хост (NVML)
vram-gpu-host-option = GPU { $index }: { $name }, доступно { $gib } ГиБ
vram-gpu-host-total = Всего по NVML { $gib } ГиБ, за вычетом резерва драйвера
vram-gpu-host-none = Этот хост: { $reason }
vram-gpu-common = Распространённые устройства (объём, который сообщает CUDA)
vram-bars-title = { $n ->
    [one] Память GPU ({ $gpu })
    [few] Память каждого из { $n } GPU (по { $gpu })
   *[many] Память каждого из { $n } GPU (по { $gpu })
    }
vram-bar-gpu = GPU { $n }
vram-bar-more = { $n ->
    [one] и ещё { $n } такой же GPU
    [few] и ещё { $n } таких же GPU
   *[many] и ещё { $n } таких же GPU
    }
vram-part-weights = Веса
vram-part-activation = Пик активаций
vram-part-non-torch = Контекст CUDA, NCCL, графы
vram-part-kv = KV-кэш
vram-part-reserve = Оставлено за пределами утилизацией
vram-part-overflow = Сверх доли движка
vram-curve-title = Одновременные запросы в зависимости от длины контекста
vram-curve-none = Ни один запрос не помещается ни при каком контексте: после весов KV-кэша не остаётся.
vram-curve-chosen = контекст { $ctx }: одновременных запросов — { $n }
vram-curve-one = один запрос
vram-curve-x = Длина контекста, токенов
vram-curve-y = Запросов одновременно
vram-curve-table = Точки таблицей
fleet-filter-state = Показать движки в состоянии
fleet-filter-all = Все { $count }
fleet-search = Поиск по профилю, хосту, модели
fleet-group-by-host = Группировать по хостам
fleet-shown = показано { $shown } из { $count }
fleet-host-counts = { $count ->
    [one] { $count } движок
    [few] { $count } движка
   *[many] { $count } движков
    }, здоровы: { $healthy }{ $trouble ->
    [0] {""}
   *[other] , требуют внимания: { $trouble }
    }

## Хосты парка с общей базой данных и задания, которые они поручают друг другу
nav-hosts = Хосты
hosts-title = Хосты парка
hosts-intro = Консоли, работающие с общей базой данных этой консоли. Действие с движком другого хоста ставится в очередь как задание; его выполняет консоль того хоста своим управлением движками, и каждый хост видит задание здесь.
hosts-empty = Ни один хост ещё не зарегистрирован.
host-col-name = Хост
host-col-state = На связи
host-col-console = Консоль
host-col-gpus = GPU
host-col-installations = Установки движков
host-col-version = Версия
host-this = (эта консоль)
host-reachable = { $seconds } с назад
host-unreachable = недоступен: нет сигнала { $seconds } с
host-no-gpus = нет GPU
host-act = действовать с этим движком через его хост
jobs-title = Задания
jobs-empty = Заданий пока нет.
job-request-title = Поручить хосту
job-field-host = Хост
job-field-profile = Профиль
job-field-action = Действие
job-field-reason = Причина (в журнал)
job-request = Поставить в очередь
job-queued = Задание №{ $id } поставлено в очередь хосту { $host }.
job-col-who = Кто поручил
job-col-queued = В очереди с
job-col-outcome = Итог
job-requested = { $who } на { $host }
job-state-queued = в очереди
job-state-running = выполняется
job-state-done = выполнено
job-state-failed = не выполнено
job-waits-unreachable = в очереди: { $host } недоступен
job-outcome-show = показать
job-action-serve = запустить
job-action-stop = остановить
job-action-restart = перезапустить
job-action-logs = прочитать журнал движка
job-action-smoke = дымовой тест (вызовы инструментов)
job-action-bench = нагрузочный тест
job-action-gate = прогнать проверку изменения
job-action-evidence = открыть инцидент (данные собираются там)
job-action-incident-action = действие по инциденту
job-action-render = показать изменение для проверки
job-field-change = Изменение №
job-field-clients-errors = Клиенты видят ошибки
job-open-incident = инцидент №{ $id }
job-open-change = изменение №{ $id }
